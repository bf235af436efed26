#!/usr/bin/env bash
# Runs chaintag_test.py on the built module with Debian's python3, the one
# with numpy (the python3 first on PATH may lack it), the module's directory
# on PYTHONPATH, and the CLIs and preset configs it compares with in the
# environment.
# Usage: chaintag_test.sh <chaintag/__init__.py> <chaintag_test.py> <tag> <evaluate>
#          <train> <chunking config> <pos config> [test class...]
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
PACKAGE="$(dirname "$(absolute "$1")")"
TEST="$(absolute "$2")"
export CHAINTAG_TAG="$(absolute "$3")"
export CHAINTAG_EVALUATE="$(absolute "$4")"
export CHAINTAG_TRAIN="$(absolute "$5")"
export CHAINTAG_CHUNK_CONFIG="$(absolute "$6")"
export CHAINTAG_POS_CONFIG="$(absolute "$7")"
PYTHON=/usr/bin/python3
if ! "$PYTHON" -c 'import numpy' 2> /dev/null; then
  echo "FAIL: $PYTHON has no numpy (apt-get install python3-numpy)" >&2
  exit 1
fi
source "$(dirname "$0")/preload_sanitizers.sh"
cd "${TEST_TMPDIR:-$(mktemp -d)}"
# PYTHONSAFEPATH: the script's directory (python/, through the runfiles'
# symlink) is not put first on the path, where python/chaintag/ (the
# sources without the extension) would shadow the package.
PYTHONSAFEPATH=1 PYTHONPATH="$(dirname "$PACKAGE")" exec "$PYTHON" "$TEST" -v "${@:8}"
