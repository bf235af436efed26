#!/usr/bin/env bash
# install.sh into a fresh virtualenv: the module imports from there, outside
# any PYTHONPATH, with its stubs beside it; a missing virtualenv is refused.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
INSTALL="$(absolute "$1")"
PACKAGE="$(dirname "$(absolute "$2")")"
source "$(dirname "$0")/preload_sanitizers.sh"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

/usr/bin/python3 -m venv --without-pip venv
unset PYTHONPATH
CHAINTAG_PACKAGE="$PACKAGE" "$INSTALL" venv > install.log || fail "$(cat install.log)"
SITE="$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
for f in _chaintag.so _chaintag.pyi __init__.py crfsuite.py sklearn/__init__.py; do
  [[ -f "$SITE/chaintag/$f" ]] || fail "chaintag/$f not in $SITE"
done
venv/bin/python - "$SITE" <<'PY' || fail "import from the virtualenv"
import os, sys
import chaintag
assert os.path.dirname(chaintag.__file__) == os.path.join(sys.argv[1], "chaintag"), chaintag.__file__
assert issubclass(chaintag.NotFoundError, FileNotFoundError)
assert callable(chaintag.train) and hasattr(chaintag.Model, "tag_batch")
assert callable(chaintag.Trainer) and callable(chaintag.ItemSequences)
PY
if CHAINTAG_PACKAGE="$PACKAGE" "$INSTALL" "$TEST_TMPDIR/no_venv" 2> err.txt; then
  fail "installed into a directory that is no virtualenv"
fi
grep -q usage err.txt || fail "no usage message: $(cat err.txt)"
echo PASS
