#!/usr/bin/env bash
# install.sh (a wrapper over pip) into a fresh virtualenv: the module
# imports from there, outside any PYTHONPATH, with its stubs beside it; a
# missing virtualenv is refused.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
INSTALL="$(absolute "$1")"
PACKAGE="$(dirname "$(absolute "$2")")"
source "$(dirname "$0")/preload_sanitizers.sh"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
unset PYTHONPATH VIRTUAL_ENV
export PIP_CONFIG_FILE=/dev/null PIP_NO_CACHE_DIR=1

# install.sh copied beside the package's sources, as in a checkout.
mkdir -p python
cp -rL "$(dirname "$INSTALL")"/{install.sh,pyproject.toml,backend} python/
cp -rL "$PACKAGE" python/chaintag
/usr/bin/python3 -m venv venv
CHAINTAG_PACKAGE="$PACKAGE" python/install.sh venv > install.log 2>&1 || fail "$(cat install.log)"
SITE="$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
for f in _chaintag.pyi py.typed __init__.py crfsuite.py sklearn/__init__.py; do
  [[ -f "$SITE/chaintag/$f" ]] || fail "chaintag/$f not in $SITE"
done
ls "$SITE"/chaintag/_chaintag.*.so > /dev/null || fail "no extension in $SITE/chaintag"
venv/bin/python - "$SITE" <<'PY' || fail "import from the virtualenv"
import os, sys
import chaintag
assert os.path.dirname(chaintag.__file__) == os.path.join(sys.argv[1], "chaintag"), chaintag.__file__
assert issubclass(chaintag.NotFoundError, FileNotFoundError)
assert callable(chaintag.train) and hasattr(chaintag.Model, "tag_batch")
assert callable(chaintag.Trainer) and callable(chaintag.ItemSequences)
PY
if CHAINTAG_PACKAGE="$PACKAGE" python/install.sh "$TEST_TMPDIR/no_venv" 2> err.txt; then
  fail "installed into a directory that is no virtualenv"
fi
grep -q usage err.txt || fail "no usage message: $(cat err.txt)"
/usr/bin/python3 -m venv --without-pip bare
if CHAINTAG_PACKAGE="$PACKAGE" python/install.sh bare 2> err.txt; then
  fail "installed into a virtualenv without pip"
fi
grep -q "has no pip" err.txt || fail "no message for a virtualenv without pip: $(cat err.txt)"
echo PASS
