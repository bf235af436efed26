#!/usr/bin/env bash
# Installs the chaintag Python package into a virtualenv with pip, from
# this checkout, without an index: a thin wrapper over
#   VENV/bin/python -m pip install --no-index <checkout>/python
# (pyproject.toml; the in-tree backend builds the extension with ./bazelw
# for VENV's Python).
#
#   python/install.sh [VENV]      # default: the active $VIRTUAL_ENV
#
# CHAINTAG_PACKAGE names an already built package directory (one holding
# _chaintag.so) to install instead of building. chaintag.sklearn needs
# scikit-learn in the virtualenv (or one made with --system-site-packages
# and Debian's python3-sklearn).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${1:-${VIRTUAL_ENV:-}}"
if [[ -z "$VENV" || ! -x "$VENV/bin/python" ]]; then
  echo "usage: install.sh VENV (a virtualenv directory with bin/python)," \
    "or activate one" >&2
  exit 2
fi
if ! "$VENV/bin/python" -m pip --version > /dev/null 2>&1; then
  echo "install.sh: $VENV has no pip (make it with python3 -m venv, without" \
    "--without-pip)" >&2
  exit 1
fi
if [[ -n "${CHAINTAG_PACKAGE:-}" ]]; then
  export CHAINTAG_PREBUILT_EXTENSION="$CHAINTAG_PACKAGE/_chaintag.so"
fi
"$VENV/bin/python" -m pip install --no-index --disable-pip-version-check \
  --quiet "$HERE"
"$VENV/bin/python" -c 'import chaintag' \
  || { echo "install.sh: the installed module does not import" >&2; exit 1; }
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
echo "installed chaintag into $SITE"
