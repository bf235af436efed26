# Sourced by the Python tests with the package directory in $PACKAGE. Under
# --config=asan the module links ASan's runtime, which must be the first
# library a process loads: preload it into Python. CPython keeps objects
# alive until exit by design, so the leak check is off there; memory errors
# are still reported. libstdc++ is preloaded too, so that ASan finds the
# real __cxa_throw when the module throws (Python itself is C).
asan_runtime="$(ldd "$PACKAGE/_chaintag.so" | awk '/libasan/ { print $3 }')"
if [[ -n "$asan_runtime" ]]; then
  cxx_runtime="$(ldd "$PACKAGE/_chaintag.so" | awk '/libstdc\+\+/ { print $3 }')"
  export LD_PRELOAD="$asan_runtime $cxx_runtime"
  export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
