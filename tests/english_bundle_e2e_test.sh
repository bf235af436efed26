#!/usr/bin/env bash
# english_bundle end to end on a small scale: --set reaches each stage's
# config (50 sentences, one pass), the bundle is written and tags raw text;
# an unknown stage or field stops with exit 2 before any training.
set -euo pipefail

source base/require_corpus.sh conll2000/train.txt
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
BUNDLE="$(absolute "$1")"; TAG="$(absolute "$2")"
POS="$(absolute "$3")"; CHUNK="$(absolute "$4")"; NER="$(absolute "$5")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
run() {
  "$BUNDLE" --pos_config="$POS" --chunk_config="$CHUNK" --ner_config="$NER" \
    --corpora="$CHAINTAG_CORPORA" --out=small --evaluate=false --quiet "$@"
}

if run --set=tagger.solver.lambda=1 2> err.txt; then fail "unknown stage accepted"; fi
grep -q 'tagger.solver.lambda' err.txt || fail "no stage in: $(cat err.txt)"
status=0; run --set=pos.solver.lamda=1 2> err.txt || status=$?
[[ $status -eq 2 ]] || fail "unknown field: exit $status"
grep -q 'lamda' err.txt || fail "no field in: $(cat err.txt)"
[[ ! -e small/pos.model ]] || fail "trained before the bad --set was seen"

run --set=pos.corpus.max_train_sentences=50,pos.solver.max_passes=1,chunk.corpus.max_train_sentences=50,chunk.solver.max_passes=1 \
    2> err.txt || fail "small bundle: $(cat err.txt)"
[[ -s small/bundle.textproto && -s small/pos.model && -s small/chunk.model ]] \
  || fail "bundle not written"
grep -q '"pass":1' small/pos.log.jsonl || fail "pos log lacks pass 1"
! grep -q '"pass":2' small/pos.log.jsonl || fail "--set=pos.solver.max_passes=1 ignored"
echo "He reckons the current account deficit will narrow ." \
  | "$TAG" --pipeline=small --format=bracketed > out.txt
[[ -s out.txt ]] || fail "the bundle tags nothing"
# With the stacked NER stage (its first stage inside the model file): a
# raw-text sentence is its own document; the bundle is scored on the test
# splits (the NER stage by documents on the corpus's columns).
[[ -f "$CHAINTAG_CORPORA/conll2003/eng.train" ]] || fail "conll2003/eng.train not found under \$CHAINTAG_CORPORA"
"$BUNDLE" --pos_config="$POS" --chunk_config="$CHUNK" --ner_config="$NER" \
  --corpora="$CHAINTAG_CORPORA" --out=stacked --quiet --ner \
  --set=pos.corpus.max_train_sentences=50,pos.solver.max_passes=1,chunk.corpus.max_train_sentences=50,chunk.solver.max_passes=1,ner.corpus.max_train_sentences=300,ner.solver.max_passes=2,ner.stacking.first_stage_passes=1,ner.corpus.retrain_on_train_and_dev=false,ner.features.num_buckets=65536 \
  > report.txt 2> err.txt || fail "stacked NER bundle: $(cat err.txt)"
grep -q 'NER' report.txt || fail "no NER score: $(cat report.txt)"
echo "Rockwell International Corp. said it signed an agreement in Paris ." \
  | "$TAG" --pipeline=stacked > ner.txt || fail "the stacked stage does not tag"
[[ $(awk 'NF == 4' ner.txt | wc -l) -eq 11 ]] || fail "NER column: $(cat ner.txt)"
echo "PASS"
