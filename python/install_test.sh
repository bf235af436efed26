#!/usr/bin/env bash
# install.sh into a fresh virtualenv: the module imports from there, outside
# any PYTHONPATH, with its stubs beside it; a missing virtualenv is refused.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
INSTALL="$(absolute "$1")"
MODULE="$(absolute "$2")"
source "$(dirname "$0")/preload_sanitizers.sh"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

/usr/bin/python3 -m venv --without-pip venv
unset PYTHONPATH
CHAINTAG_MODULE="$MODULE" "$INSTALL" venv > install.log || fail "$(cat install.log)"
SITE="$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
[[ -f "$SITE/chaintag.so" && -f "$SITE/chaintag.pyi" ]] || fail "files not in $SITE"
venv/bin/python - "$SITE" <<'PY' || fail "import from the virtualenv"
import os, sys
import chaintag
assert os.path.dirname(chaintag.__file__) == sys.argv[1], chaintag.__file__
assert issubclass(chaintag.NotFoundError, FileNotFoundError)
assert callable(chaintag.train) and hasattr(chaintag.Model, "tag_batch")
PY
if CHAINTAG_MODULE="$MODULE" "$INSTALL" "$TEST_TMPDIR/no_venv" 2> err.txt; then
  fail "installed into a directory that is no virtualenv"
fi
grep -q usage err.txt || fail "no usage message: $(cat err.txt)"
echo PASS
