#!/usr/bin/env bash
# english_bundle end to end on a small scale: --set reaches each stage's
# config (50 sentences, one pass), the bundle is written and tags raw text;
# an unknown stage or field stops with exit 2 before any training.
set -euo pipefail

if [[ -z "${CHAINTAG_CORPORA:-}" || ! -f "$CHAINTAG_CORPORA/conll2000/train.txt" ]]; then
  echo "CoNLL-2000 not found (set CHAINTAG_CORPORA): skipped"
  exit 0
fi
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
echo "PASS"
