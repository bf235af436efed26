#!/usr/bin/env bash
# `pip install` as a user runs it, without an index: from a checkout's
# python/ into a fresh virtualenv (chaintag.sklearn imports and fits from
# the installed package, with its stubs and metadata), `pip uninstall`
# removes every file, and `pip wheel` makes a wheel that installs into a
# second virtualenv in another directory after the checkout is gone.
# Bazel may not run inside a test, so the backend is given the extension
# of the test's runfiles (CHAINTAG_PREBUILT_EXTENSION); without it, in a
# tree with no ./bazelw, it must say so.
# Usage: pip_install_test.sh <pyproject.toml> <chaintag/_chaintag.so>
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
PYTHON_DIR="$(dirname "$(absolute "$1")")"
EXTENSION="$(absolute "$2")"
PACKAGE="$(dirname "$EXTENSION")"  # for preload_sanitizers.sh
source "$(dirname "$0")/preload_sanitizers.sh"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
unset PYTHONPATH PIP_INDEX_URL PIP_FIND_LINKS VIRTUAL_ENV
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1

# A checkout's python/ (copies: pip reads and writes in place).
mkdir -p checkout/python
for f in pyproject.toml backend chaintag; do
  cp -rL "$PYTHON_DIR/$f" checkout/python/
done
rm -f checkout/python/chaintag/*.so

# Debian's scikit-learn and numpy through --system-site-packages; chaintag
# itself only from the virtualenv.
/usr/bin/python3 -m venv --system-site-packages venv
CHAINTAG_PREBUILT_EXTENSION="$EXTENSION" venv/bin/pip install --no-index \
  ./checkout/python > install.log 2>&1 || fail "pip install: $(cat install.log)"
SITE="$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
SUFFIX="$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
for f in "_chaintag$SUFFIX" _chaintag.pyi py.typed __init__.py crfsuite.py \
    _settings.py sklearn/__init__.py sklearn/metrics.py; do
  [[ -f "$SITE/chaintag/$f" ]] || fail "chaintag/$f not in $SITE"
done

# The installed package, from another directory: imports, fits, tags.
cat > use.py <<'PY'
import importlib.metadata, os, sys
import chaintag, chaintag.sklearn
site = sys.argv[1]
assert chaintag.__file__ == os.path.join(site, "chaintag", "__init__.py"), chaintag.__file__
assert chaintag.sklearn.__file__.startswith(site), chaintag.sklearn.__file__
assert chaintag._chaintag.__file__.startswith(site), chaintag._chaintag.__file__
assert importlib.metadata.version("chaintag") == "0.1.0"
X = [[{"w": "a"}, {"w": "b"}], [{"w": "b"}, {"w": "a"}, {"w": "c"}]]
y = [["A", "B"], ["B", "A", "C"]]
crf = chaintag.sklearn.CRF(max_iterations=20).fit(X, y)
assert [list(tags) for tags in crf.predict(X)] == y, crf.predict(X)
print("ok", sorted(crf.classes_))
PY
mkdir elsewhere
(cd elsewhere && ../venv/bin/python ../use.py "$SITE") > use.log 2>&1 \
  || fail "the installed package: $(cat use.log)"
grep -qx "ok \['A', 'B', 'C'\]" use.log || fail "$(cat use.log)"

venv/bin/pip uninstall -y chaintag > uninstall.log 2>&1 || fail "$(cat uninstall.log)"
[[ ! -e "$SITE/chaintag" ]] || fail "uninstall left $(find "$SITE/chaintag")"
ls -d "$SITE"/chaintag-* 2> /dev/null && fail "uninstall left the metadata"
if (cd elsewhere && ../venv/bin/python -c 'import chaintag') 2> /dev/null; then
  fail "chaintag still imports after pip uninstall"
fi

# A wheel, installed into a second virtualenv elsewhere, the checkout gone.
CHAINTAG_PREBUILT_EXTENSION="$EXTENSION" venv/bin/pip wheel --no-index \
  --no-deps -w wheels ./checkout/python > wheel.log 2>&1 || fail "pip wheel: $(cat wheel.log)"
WHEEL="$(ls wheels/*.whl)"
TAG="$(venv/bin/python -c 'import sys, sysconfig; print("cp%d%d-cp%d%d-%s" % (sys.version_info[:2] * 2 + (sysconfig.get_platform().replace("-", "_"),)))')"
[[ "$(basename "$WHEEL")" == "chaintag-0.1.0-$TAG.whl" ]] || fail "wheel name $WHEEL (tag $TAG)"
rm -rf checkout
mkdir -p other/place
mv "$WHEEL" other/
cd other/place
/usr/bin/python3 -m venv --system-site-packages venv2
venv2/bin/pip install --no-index ../"$(basename "$WHEEL")" > install2.log 2>&1 \
  || fail "installing the wheel: $(cat install2.log)"
SITE2="$(venv2/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
venv2/bin/python "$TEST_TMPDIR/use.py" "$SITE2" > use2.log 2>&1 || fail "from the wheel: $(cat use2.log)"
grep -qx "ok \['A', 'B', 'C'\]" use2.log || fail "$(cat use2.log)"
venv2/bin/pip uninstall -y chaintag > /dev/null || fail "uninstalling the wheel's install"
[[ ! -e "$SITE2/chaintag" ]] || fail "uninstall left $SITE2/chaintag"

# Without a prebuilt extension the backend runs ./bazelw, which a copied
# python/ does not have: the build must say what to do.
cd "$TEST_TMPDIR"
mkdir -p copy && cp -rL "$PYTHON_DIR/pyproject.toml" "$PYTHON_DIR/backend" copy/
if other/place/venv2/bin/pip wheel --no-index -w wheels2 ./copy > copy.log 2>&1; then
  fail "built a wheel without ./bazelw or a prebuilt extension"
fi
grep -q "bazelw not found" copy.log || fail "no explanation: $(cat copy.log)"
echo PASS
