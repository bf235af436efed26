#!/usr/bin/env bash
# Runs the Python example of README.md as written, from a directory laid
# out as the README assumes (the repository's root, the corpora at
# ../shared/corpora), with Debian's python3 and the built module, and
# checks that it prints exactly what the README says it prints.
# Usage: readme_example_test.sh <chaintag/__init__.py> <readme_example_test.py>
#          <README.md> <chunking config>
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
PACKAGE="$(dirname "$(absolute "$1")")"
TEST="$(absolute "$2")"
README="$(absolute "$3")"
CONFIG="$(absolute "$4")"
source base/require_corpus.sh conll2000/test.txt
PYTHON=/usr/bin/python3
if ! "$PYTHON" -c 'import numpy' 2> /dev/null; then
  echo "FAIL: $PYTHON has no numpy (apt-get install python3-numpy)" >&2
  exit 1
fi
source "$(dirname "$0")/preload_sanitizers.sh"
cd "${TEST_TMPDIR:-$(mktemp -d)}"
mkdir -p repo/pipeline/configs shared
cp "$CONFIG" repo/pipeline/configs/conll2000_chunking.textproto
ln -sfn "$CHAINTAG_CORPORA" shared/corpora
cd repo
# PYTHONSAFEPATH: the script's directory (python/, through the runfiles'
# symlink) is not put first on the path, where python/chaintag/ (the
# sources without the extension) would shadow the package.
PYTHONSAFEPATH=1 PYTHONPATH="$(dirname "$PACKAGE")" exec "$PYTHON" "$TEST" "$README" "$PYTHON"
