#!/usr/bin/env bash
# The command-line tools end to end: train (preset, 300 sentences) ->
# tag < test.txt -> evaluate must print exactly the report train printed;
# tagging without the gold column gives the same predictions; bad input and
# damaged models fail with a clear message and exit 1.
set -euo pipefail

if [[ -z "${CHAINTAG_CORPORA:-}" || ! -f "$CHAINTAG_CORPORA/conll2000/test.txt" ]]; then
  echo "CoNLL-2000 not found (set CHAINTAG_CORPORA): skipped"
  exit 0
fi
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TAG="$(absolute "$2")"
EVALUATE="$(absolute "$3")"; CONFIG="$(absolute "$4")"
TEST="$CHAINTAG_CORPORA/conll2000/test.txt"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$TRAIN" --config="$CONFIG" --max_train_sentences=300 --max_passes=3 \
  --model=cli.model --log=cli.jsonl --quiet > train_report.txt
[[ -s cli.model ]] || fail "no model written"
[[ $(wc -l < cli.jsonl) -eq 3 ]] || fail "expected 3 JSON log lines"
grep -q '"pass":3' cli.jsonl || fail "log lacks pass 3"

"$TAG" --model=cli.model < "$TEST" > tagged.txt
"$EVALUATE" < tagged.txt > evaluate_report.txt
diff train_report.txt evaluate_report.txt || fail "evaluate differs from train's report"
[[ $(wc -l < tagged.txt) -eq $(wc -l < "$TEST") ]] || fail "line count changed"

# Without the gold column: same predicted column.
cut -d' ' -f1,2 "$TEST" | sed 's/^ *$//' | "$TAG" --model=cli.model > nogold.txt
diff <(awk '{print $NF}' tagged.txt) <(awk '{print $NF}' nogold.txt) \
  || fail "predictions depend on the gold column"

# Malformed input: file:line error, exit 1.
printf 'Confidence NN B-NP\nin IN\n' > bad.txt
if "$TAG" --model=cli.model < bad.txt > /dev/null 2> err.txt; then
  fail "malformed input accepted"
fi
grep -q 'stdin:2' err.txt || fail "error does not name line 2: $(cat err.txt)"

# Damaged model: rejected with a message naming the file.
head -c 1000 cli.model > broken.model
if "$TAG" --model=broken.model < "$TEST" > /dev/null 2> err.txt; then
  fail "truncated model accepted"
fi
grep -q 'broken.model' err.txt || fail "error does not name the model: $(cat err.txt)"

# -DOCSTART- lines pass through (with the outside tag appended so the field
# count stays constant), and evaluate accepts the result.
{ echo "-DOCSTART- -X- O"; echo; head -30 "$TEST"; } | "$TAG" --model=cli.model > doc.txt
[[ $(head -1 doc.txt) == "-DOCSTART- -X- O O" ]] || fail "DOCSTART line: $(head -1 doc.txt)"
"$EVALUATE" < doc.txt > /dev/null || fail "evaluate rejects tagged DOCSTART output"
echo "PASS"
