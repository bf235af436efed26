#!/usr/bin/env bash
# The command-line tools end to end: train (preset, 300 sentences) ->
# tag < test.txt -> evaluate must print exactly the report train printed;
# tagging without the gold column gives the same predictions; bad input and
# damaged models fail with a clear message and exit 1. tag --threads=N
# writes exactly what one thread writes (-DOCSTART- lines and errors in the
# middle of the input included) and still answers a sentence in a pipe
# before the input ends; --set reaches any singular field (--pipeline's
# threads are tested with its bundle in tag_pipeline_e2e_test).
set -euo pipefail

source base/require_corpus.sh conll2000/test.txt
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

# --threads: byte-identical output for any thread count.
cut -d' ' -f1,2 "$TEST" | sed 's/^ *$//' > nogold_in.txt
for threads in 1 2 3; do
  "$TAG" --model=cli.model --threads=$threads < "$TEST" > threads.txt
  cmp -s tagged.txt threads.txt || fail "--threads=$threads differs on test.txt"
  "$TAG" --model=cli.model --threads=$threads --input=nogold_in.txt > threads.txt
  cmp -s nogold.txt threads.txt \
    || fail "--threads=$threads differs without the gold column"
done
# -DOCSTART- at the start, after every 50th sentence, twice in a row after
# every 120th, and last: held until a sentence shows the field count.
awk 'BEGIN { print "-DOCSTART- -X- O"; print "" }
     { print } /^$/ { ++n; if (n % 50 == 0) { print "-DOCSTART- -X- O"; print "" }
                      if (n % 120 == 0) { print "-DOCSTART- -X- O"; print "" } }
     END { print "-DOCSTART- -X- O" }' "$TEST" > docs.txt
"$TAG" --model=cli.model < docs.txt > docs1.txt
[[ $(grep -c '^-DOCSTART- -X- O O$' docs1.txt) -eq $(grep -c DOCSTART docs.txt) ]] \
  || fail "DOCSTART lines lost or without the outside tag"
for threads in 2 3; do
  "$TAG" --model=cli.model --threads=$threads < docs.txt > threads.txt
  cmp -s docs1.txt threads.txt || fail "--threads=$threads differs with DOCSTART lines"
done
# A bad line in the middle: every thread count writes exactly the
# sentences before the failing one, then names its line.
awk 'NR == 20000 { print $1, $2; next } { print }' "$TEST" > bad_mid.txt
sentence_start=$(awk 'NR < 20000 && !NF { last = NR } END { print last }' "$TEST")
for threads in 1 2 3; do
  if "$TAG" --model=cli.model --threads=$threads < bad_mid.txt > partial.txt 2> err.txt; then
    fail "--threads=$threads: malformed input accepted"
  fi
  grep -q 'stdin:20000: expected 3 fields, got 2' err.txt \
    || fail "--threads=$threads: error does not name line 20000: $(cat err.txt)"
  cmp -s <(head -n "$sentence_start" tagged.txt) partial.txt \
    || fail "--threads=$threads: output before the error differs"
done
for threads in 0 -1; do
  set +e
  "$TAG" --model=cli.model --threads=$threads < /dev/null 2> err.txt
  status=$?
  set -e
  [[ $status -eq 2 ]] || fail "--threads=$threads exit $status"
  grep -q -- '--threads' err.txt || fail "--threads=$threads message: $(cat err.txt)"
done
# Flags of --pipeline, or of CRFsuite-format models, are refused on a
# CoNLL model rather than ignored.
for flag in --format=json --paragraphs --margins --reference; do
  set +e
  "$TAG" --model=cli.model "$flag" < /dev/null > /dev/null 2> err.txt
  status=$?
  set -e
  [[ $status -eq 2 ]] || fail "$flag on a CoNLL model: exit $status"
  grep -q -- "${flag%%=*} applies to" err.txt || fail "$flag message: $(cat err.txt)"
done

# --nbest=K on a CoNLL model lists each sentence's K best labelings as
# crf_test -n does, after '# k score' lines; copy 0 is the plain output.
head -200 "$TEST" > nbest_in.txt
"$TAG" --model=cli.model < nbest_in.txt > plain.txt
"$TAG" --model=cli.model --nbest=2 < nbest_in.txt > nbest.txt
grep -q '^# 1 ' nbest.txt || fail "--nbest=2 lists no second labeling"
awk '/^# [0-9]+ /{k = $2; next} k == 0' nbest.txt | cmp -s - plain.txt ||
  fail "--nbest=2: copy 0 differs from the plain output"

# A write error (a full disk) ends tag with a message and exit 1, on
# either thread count; it does not crash or tag on into the void.
for threads in 1 2; do
  set +e
  "$TAG" --model=cli.model --threads=$threads < "$TEST" > /dev/full 2> err.txt
  status=$?
  set -e
  [[ $status -eq 1 ]] || fail "--threads=$threads to /dev/full: exit $status"
  grep -q 'cannot write the output' err.txt \
    || fail "--threads=$threads to /dev/full: $(cat err.txt)"
done

# Streaming: with batches, a sentence is still answered before the input
# ends (the batch ends when nothing more is buffered).
coproc TAGGER { "$TAG" --model=cli.model --threads=2; }
# Bash unsets TAGGER_PID once the coprocess has ended: keep it.
tagger_pid=$TAGGER_PID
printf 'Confidence NN\nin IN\n\n' >&"${TAGGER[1]}"
read -r -t 30 -u "${TAGGER[0]}" first || fail "no output before end of input"
[[ "$first" == "Confidence NN "* ]] || fail "streamed: $first"
read -r -t 30 -u "${TAGGER[0]}" second || fail "no second token"
read -r -t 30 -u "${TAGGER[0]}" blank || fail "no blank line after the sentence"
[[ -z "$blank" ]] || fail "streamed: '$blank' instead of a blank line"
printf 'He PRP\n\n' >&"${TAGGER[1]}"
read -r -t 30 -u "${TAGGER[0]}" third || fail "no second sentence"
[[ "$third" == "He PRP "* ]] || fail "streamed: $third"
exec {TAGGER[1]}>&-
# 127: bash already reaped it (it ended on its own at end of input).
status=0
wait "$tagger_pid" || status=$?
[[ $status -eq 0 || $status -eq 127 ]] || fail "the streaming tagger exited $status"

# --set reaches any field by its dotted path, after the named flags; a
# mistyped path fails and names it.
"$TRAIN" --config="$CONFIG" --max_train_sentences=100 --max_passes=3 \
  --set=solver.max_passes=1,solver.lambda=0.02 --eval_every=0 \
  --model=set.model --log=set.jsonl --quiet > /dev/null
[[ $(wc -l < set.jsonl) -eq 1 ]] || fail "--set=solver.max_passes=1 ignored"
grep -q '"lambda":0.02' set.jsonl || fail "--set=solver.lambda=0.02 not in the run"
if "$TRAIN" --config="$CONFIG" --set=solver.lamda=1 > /dev/null 2> err.txt; then
  fail "--set with an unknown field accepted"
fi
grep -q 'solver.lamda' err.txt || fail "--set error does not name the path: $(cat err.txt)"
echo "PASS"
