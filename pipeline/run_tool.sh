#!/usr/bin/env bash
# The //pipeline presets' `bazel run` targets: runs the tools binary named by
# the first argument (a runfiles path) with the remaining arguments.
set -euo pipefail
tool="$1"
shift
exec "$tool" "$@"
