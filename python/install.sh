#!/usr/bin/env bash
# Installs the chaintag Python module (and its type stubs) into a
# virtualenv's site-packages.
#
#   python/install.sh [VENV]      # default: the active $VIRTUAL_ENV
#
# Builds //python:chaintag.so with ./bazelw first, unless CHAINTAG_MODULE
# names an already built module. The module is built for Python 3.11 (the
# headers of Debian's python3-dev); the virtualenv's Python must be 3.11.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${1:-${VIRTUAL_ENV:-}}"
if [[ -z "$VENV" || ! -x "$VENV/bin/python" ]]; then
  echo "usage: install.sh VENV (a virtualenv directory with bin/python)," \
    "or activate one" >&2
  exit 2
fi
MODULE="${CHAINTAG_MODULE:-}"
if [[ -z "$MODULE" ]]; then
  ROOT="$(dirname "$HERE")"
  (cd "$ROOT" && ./bazelw build //python:chaintag.so)
  MODULE="$(cd "$ROOT" && ./bazelw info bazel-bin 2> /dev/null)/python/chaintag.so"
fi
VERSION="$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [[ "$VERSION" != 3.11 ]]; then
  echo "install.sh: $VENV runs Python $VERSION; the module is built for 3.11" >&2
  exit 1
fi
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
mkdir -p "$SITE"
install -m 0755 "$MODULE" "$SITE/chaintag.so"
install -m 0644 "$HERE/chaintag.pyi" "$SITE/chaintag.pyi"
"$VENV/bin/python" -c 'import chaintag' \
  || { echo "install.sh: the installed module does not import" >&2; exit 1; }
echo "installed chaintag into $SITE"
