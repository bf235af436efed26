#!/usr/bin/env bash
# regpath end to end on OCR-small (fold 0 to train, fold 1 as dev), with a
# short grid: the table marks the chosen breakpoint, the chosen model is
# written, the JSON holds the path and both grids, the SVG both plots, and
# the passes comparison is printed. A bad --mode or --dev_folds fails before
# any training, and the help is ASCII.
set -euo pipefail

source base/require_corpus.sh ocr/letter.data.gz
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
REGPATH="$(absolute "$1")"; CONFIG="$(absolute "$2")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$REGPATH" --config="$CONFIG" --dev_folds=1 --step=pairwise --sampling=gap \
  --grid_high=3 --grid_low=-3 --json=rp.json --svg=rp.svg \
  > table.txt 2> err.txt || fail "run failed: $(cat err.txt)"
grep -q '<- chosen' table.txt || fail "no chosen row: $(cat table.txt)"
grep -q '^chosen: lambda .* dev_letter_error .* test letter error' table.txt \
  || fail "no chosen line"
grep -q 'grid, cold starts (7 values)' table.txt || fail "no cold grid line"
grep -q 'grid, warm starts (7 values)' table.txt || fail "no warm grid line"
[[ -s ocr_small.regpath.model ]] || fail "no model written"
grep -q '"grid_warm": *\[' rp.json || fail "JSON lacks the warm grid"
grep -q '"score":' rp.json || fail "JSON lacks scores"
[[ $(grep -c '"lambda_end"' rp.json) -ge 10 ]] || fail "JSON: too few points"
[[ $(grep -c '<polyline' rp.svg) -ge 4 ]] || fail "SVG lacks curves"
# Every exact breakpoint's gap is within κε = 0.09 (the table's 4th column).
awk '$1 ~ /^[0-9]+$/ && $1 > 0 && $4 + 0 > 0.09 + 1e-9 { bad = 1 } END { exit bad }' \
  table.txt || fail "a breakpoint's gap exceeds κε"

if "$REGPATH" --config="$CONFIG" --mode=sideways > /dev/null 2> bad.txt; then
  fail "--mode=sideways accepted"
fi
grep -q 'also takes epsilon, heuristic' bad.txt || fail "unclear error: $(cat bad.txt)"
# regpath's own --dev_folds is read only when given, whatever its value.
if "$REGPATH" --config="$CONFIG" --dev_folds=x > /dev/null 2> bad.txt; then
  fail "--dev_folds=x accepted"
fi
grep -q -- '--dev_folds: not a fold number: x' bad.txt \
  || fail "--dev_folds=x: unclear error: $(cat bad.txt)"

"$REGPATH" --helpfull > help.txt 2>&1 || true
grep -q -- '--lambda_min' help.txt || fail "no --lambda_min in the help"
if LC_ALL=C grep -n '[^ -~[:space:]]' help.txt; then fail "help is not ASCII"; fi
echo PASS
