#!/usr/bin/env bash
# tag --pipeline end to end: train a small POS tagger and chunker (presets,
# 500 sentences, 3 passes), put them in a bundle by hand-written manifest,
# and tag raw text: the issue's example in every format, paragraphs, n-best,
# valid IOB2 under constrained decoding, invalid UTF-8, flushing per
# sentence in a pipe, the errors of a broken bundle, and --threads giving
# one thread's output.
set -euo pipefail

source base/require_corpus.sh conll2000/test.txt
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TAG="$(absolute "$2")"
POS_CONFIG="$(absolute "$3")"; CHUNK_CONFIG="$(absolute "$4")"
TEST="$CHAINTAG_CORPORA/conll2000/test.txt"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p bundle
"$TRAIN" --config="$POS_CONFIG" --max_train_sentences=500 --max_passes=3 \
  --eval_every=0 --model=bundle/pos.model --log=pos.jsonl --quiet > /dev/null
"$TRAIN" --config="$CHUNK_CONFIG" --max_train_sentences=500 --max_passes=3 \
  --eval_every=0 --model=bundle/chunk.model --log=chunk.jsonl --quiet > /dev/null
cat > bundle/bundle.textproto <<'MANIFEST'
name: "small"
stages { name: "pos" model: "pos.model" inputs { column: "word" } writes: "pos" }
stages {
  name: "chunk"
  model: "chunk.model"
  inputs { column: "word" }
  inputs { column: "pos" }
  writes: "chunk"
}
MANIFEST

SENTENCE="Rockwell International Corp. said it signed a tentative agreement."
TOKENS="Rockwell International Corp. said it signed a tentative agreement ."

# Bracketed: one line; without the brackets and types it is the tokens.
echo "$SENTENCE" | "$TAG" --pipeline=bundle --format=bracketed > bracketed.txt
[[ $(wc -l < bracketed.txt) -eq 1 ]] || fail "bracketed: $(cat bracketed.txt)"
grep -q '^\[NP Rockwell' bracketed.txt || fail "bracketed: $(cat bracketed.txt)"
stripped=$(sed -e 's/\[[A-Z]* //g' -e 's/ \]//g' bracketed.txt)
[[ "$stripped" == "$TOKENS" ]] || fail "bracketed tokens: $stripped"

# CoNLL: token, POS, chunk; a blank line after the sentence.
echo "$SENTENCE" | "$TAG" --pipeline=bundle > conll.txt
[[ $(wc -l < conll.txt) -eq 11 ]] || fail "conll lines: $(cat conll.txt)"
awk 'NF && NF != 3 { exit 1 }' conll.txt || fail "conll fields: $(cat conll.txt)"
[[ "$(head -1 conll.txt | cut -d' ' -f1,2)" == "Rockwell NNP" ]] \
  || fail "conll: $(head -1 conll.txt)"
[[ -z "$(tail -1 conll.txt)" ]] || fail "no blank line after the sentence"

# JSON: one object per sentence; offsets slice the line into the tokens.
printf '%s\n\n  \n%s\n' "$SENTENCE" "He said it." \
  | "$TAG" --pipeline=bundle --format=json --margins > out.json
[[ $(wc -l < out.json) -eq 2 ]] || fail "json lines: $(cat out.json)"
python3 - "$SENTENCE" out.json <<'PY' || fail "json: $(cat out.json)"
import json, sys
text = sys.argv[1].encode()
records = [json.loads(line) for line in open(sys.argv[2])]
r = records[0]
assert r["line"] == 1 and records[1]["line"] == 4, r
assert [s["column"] for s in r["stages"]] == ["pos", "chunk"]
for token, offset in zip(r["tokens"], r["offsets"]):
    assert text[offset["begin"]:offset["end"]].decode() == token, (token, offset)
chunk = r["stages"][1]
assert len(chunk["tags"]) == len(r["tokens"])
assert chunk["spans"][0]["type"] == "NP", chunk
assert "margin" in chunk and "score" in chunk and "margin" in r["stages"][0]
PY

# Paragraph mode: sentences split, offsets into the paragraph.
printf 'He left. She stayed\nat home.\n\nThe end.\n' \
  | "$TAG" --pipeline=bundle --format=json --paragraphs > para.json
[[ $(wc -l < para.json) -eq 3 ]] || fail "paragraphs: $(cat para.json)"
grep -q '"tokens":\["She","stayed","at","home","."\]' para.json \
  || fail "paragraph sentence: $(cat para.json)"
grep -q '"line":4' para.json || fail "second paragraph's line: $(cat para.json)"

# n-best: the last stage has K columns.
echo "$SENTENCE" | "$TAG" --pipeline=bundle --nbest=3 > nbest.txt
awk 'NF && NF != 5 { exit 1 }' nbest.txt || fail "nbest columns: $(cat nbest.txt)"
echo "$SENTENCE" | "$TAG" --pipeline=bundle --format=json --nbest=3 \
  | grep -q '"nbest":\[{"tags"' || fail "json nbest"

# Constrained decoding (the default) writes valid IOB2 on 200 test
# sentences of raw text: no I-X unless after B-X or I-X.
awk 'BEGIN { RS = ""; FS = "\n" } NR <= 200 {
       line = ""; for (i = 1; i <= NF; ++i) { split($i, f, " ");
       line = line (i > 1 ? " " : "") f[1] } print line }' "$TEST" > raw.txt
"$TAG" --pipeline=bundle < raw.txt > raw.conll
awk '!NF { prev = "O"; next }
     { tag = $3; if (tag ~ /^I-/ && prev != "B-" substr(tag, 3) &&
                     prev != "I-" substr(tag, 3)) { print; bad = 1 }
       prev = tag } END { exit bad }' raw.conll || fail "invalid IOB2 with --constrained"
[[ $(grep -c '^$' raw.conll) -eq 200 ]] || fail "expected 200 sentences"
"$TAG" --pipeline=bundle --constrained=false < raw.txt > /dev/null \
  || fail "--constrained=false"

# Invalid UTF-8 is replaced, never a crash.
printf 'caf\xe9 \xff\xfe costs $5.\n' | "$TAG" --pipeline=bundle > utf8.txt \
  || fail "invalid UTF-8 input"
[[ $(grep -c . utf8.txt) -ge 3 ]] || fail "invalid UTF-8: $(cat utf8.txt)"

# Streaming: the first sentence's output arrives before the input ends.
coproc TAGGER { "$TAG" --pipeline=bundle --format=bracketed; }
# Bash unsets TAGGER_PID once the coprocess has exited, which may be
# before the wait below; it keeps the status of the pid.
tagger_pid=$TAGGER_PID
echo "$SENTENCE" >&"${TAGGER[1]}"
read -r -t 30 -u "${TAGGER[0]}" first || fail "no output before end of input"
[[ "$first" == \[NP* ]] || fail "streamed: $first"
echo "He left." >&"${TAGGER[1]}"
read -r -t 30 -u "${TAGGER[0]}" second || fail "no second line"
exec {TAGGER[1]}>&-
wait "$tagger_pid" || fail "tag --pipeline exited with status $?"

# Errors: a missing bundle, a stage reading a column nobody writes, a bad
# format name.
if "$TAG" --pipeline=nowhere < /dev/null 2> err.txt; then fail "missing bundle"; fi
grep -q 'nowhere' err.txt || fail "error does not name the bundle: $(cat err.txt)"
mkdir -p broken && cp bundle/chunk.model broken/
cat > broken/bundle.textproto <<'MANIFEST'
stages {
  model: "chunk.model"
  inputs { column: "word" }
  inputs { column: "pos" }
  writes: "chunk"
}
MANIFEST
if "$TAG" --pipeline=broken < /dev/null 2> err.txt; then fail "broken bundle"; fi
grep -q "broken/bundle.textproto.*reads column 'pos'" err.txt \
  || fail "broken bundle message: $(cat err.txt)"
set +e
echo x | "$TAG" --pipeline=bundle --format=xml 2> err.txt
status=$?
set -e
[[ $status -eq 2 ]] || fail "--format=xml exit $status"
grep -q 'conll | bracketed | json' err.txt || fail "format error: $(cat err.txt)"
# --threads: raw text by lines and by paragraphs, every format, the same
# for any count.
awk 'BEGIN { RS = ""; FS = "\n" } NR <= 600 {
       line = ""; for (i = 1; i <= NF; ++i) { split($i, f, " ");
       line = line (i > 1 ? " " : "") f[1] } print line
       if (NR % 7 == 0) print "" }' "$TEST" > raw.txt
for format in conll bracketed json; do
  for paragraphs in false true; do
    "$TAG" --pipeline=bundle --format=$format --paragraphs=$paragraphs \
      < raw.txt > raw1.txt
    [[ -s raw1.txt ]] || fail "--pipeline --format=$format: no output"
    for threads in 2 3; do
      "$TAG" --pipeline=bundle --format=$format --paragraphs=$paragraphs \
        --threads=$threads < raw.txt > threads.txt
      cmp -s raw1.txt threads.txt \
        || fail "--pipeline --format=$format --paragraphs=$paragraphs --threads=$threads differs"
    done
  done
done
echo "PASS"
