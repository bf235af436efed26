#!/usr/bin/env bash
# Installs the chaintag Python package (the extension, its type stubs and
# the Python files) into a virtualenv's site-packages.
#
#   python/install.sh [VENV]      # default: the active $VIRTUAL_ENV
#
# Builds //python:chaintag with ./bazelw first, unless CHAINTAG_PACKAGE
# names an already built package directory. chaintag.sklearn needs
# scikit-learn in the virtualenv (or one made with --system-site-packages
# and Debian's python3-sklearn). The module is built for Python 3.11 (the
# headers of Debian's python3-dev); the virtualenv's Python must be 3.11.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${1:-${VIRTUAL_ENV:-}}"
if [[ -z "$VENV" || ! -x "$VENV/bin/python" ]]; then
  echo "usage: install.sh VENV (a virtualenv directory with bin/python)," \
    "or activate one" >&2
  exit 2
fi
PACKAGE="${CHAINTAG_PACKAGE:-}"
if [[ -z "$PACKAGE" ]]; then
  ROOT="$(dirname "$HERE")"
  (cd "$ROOT" && ./bazelw build //python:chaintag)
  PACKAGE="$(cd "$ROOT" && ./bazelw info bazel-bin 2> /dev/null)/python/chaintag"
fi
VERSION="$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [[ "$VERSION" != 3.11 ]]; then
  echo "install.sh: $VENV runs Python $VERSION; the module is built for 3.11" >&2
  exit 1
fi
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
mkdir -p "$SITE"
rm -rf "$SITE/chaintag" "$SITE/chaintag.so" "$SITE/chaintag.pyi"
# cp -L: Bazel's outputs may be symlinks into its cache.
cp -rL "$PACKAGE" "$SITE/chaintag"
rm -f "$SITE/chaintag/"*.params  # the linker's, not the package's
chmod -R u+w "$SITE/chaintag"
"$VENV/bin/python" -c 'import chaintag' \
  || { echo "install.sh: the installed module does not import" >&2; exit 1; }
echo "installed chaintag into $SITE"
