#!/usr/bin/env bash
# tests/layering_check.py on hand-made edge lists: the layering's own
# edges pass; an upward edge, a package outside the table, models reaching
# past the Problem interface, a wrapper's non-data edge and a target no
# root reaches each fail with a line naming it.
set -euo pipefail
CHECK="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_pass() {
  printf '%s\n' "$@" > edges.txt
  python3 "$CHECK" --edges=edges.txt > out.txt || fail "refused: $* ($(cat out.txt))"
}
expect_fault() {
  local want="$1"; shift
  printf '%s\n' "$@" > edges.txt
  if python3 "$CHECK" --edges=edges.txt > out.txt; then fail "accepted: $*"; fi
  grep -qF -- "$want" out.txt || fail "no '$want' in: $(cat out.txt)"
}

expect_pass \
  "//corpora:conll_reader //base:file_io deps cc_library" \
  "//models:chain_problem //solvers:problem deps cc_library" \
  "//models:chain_problem //solvers:solver_config_cc_proto deps cc_library" \
  "//tagging:bundle //models:chain_model deps cc_library" \
  "//pipeline:pipeline //tagging:conll_tagging deps cc_library" \
  "//pipeline:conll2000_chunking //tools:train data sh_binary+run-wrapper" \
  "//tests:cli_e2e_test //tools:train data sh_test" \
  "//python:chaintag_test //tools:tag data sh_test" \
  "//python:readme_example_test //:README.md data sh_test" \
  "//tools:train //tools:config_flags deps cc_library"
expect_fault "//pipeline:x -> //tools:train_main.cc (srcs): pipeline may not use tools" \
  "//pipeline:x //tools:train_main.cc srcs cc_binary"
expect_fault "//models:m -> //tagging:bundle (deps): models may not use tagging" \
  "//models:m //tagging:bundle deps cc_library"
expect_fault "solvers may not use models" "//solvers:bcfw //models:chain_problem deps cc_library"
expect_fault "//tools:x -> //:README.md (data): tools may not use" "//tools:x //:README.md data cc_binary"
expect_fault "tagging may not use pipeline" "//tagging:t //pipeline:pipeline deps cc_library"
expect_fault "pipeline may not use tools" "//pipeline:conll2000_chunking //tools:train deps sh_binary+run-wrapper"
expect_fault "pipeline may not use tools" "//pipeline:conll2000_chunking //tools:train data sh_binary"
expect_fault "models may use only" "//models:m //solvers:bcfw deps cc_library"
expect_fault "not in the layering table" "//newpkg:x //base:file_io deps cc_library"
expect_fault "python may not use tests" "//python:m //tests:bundle_test data sh_test"
expect_fault "python may not use tools" "//python:chaintag/_chaintag.so //tools:train deps cc_binary"

# Targets named in a BUILD file must be reached.
mkdir -p pkg
cat > pkg/BUILD <<'BUILD'
cc_library(
    name = "reached",
)
cc_library(
    name = "forgotten",
)
BUILD
printf '//tools:reached //base:file_io deps cc_library\n' > edges.txt
printf '//pkg:reached\n//tools:reached\n' > reached.txt
if python3 "$CHECK" --edges=edges.txt --reached=reached.txt --build_files pkg/BUILD > out.txt; then
  fail "an unreached target passed"
fi
grep -qF "//pkg:forgotten: not reached" out.txt || fail "no unreached target in: $(cat out.txt)"
! grep -qF "//pkg:reached:" out.txt || fail "a reached target was reported"
echo PASS
