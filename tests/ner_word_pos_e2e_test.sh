#!/usr/bin/env bash
# The word-POS-tag NER preset by its one line on a corpus the test writes
# with no document marks: it trains (two stages, pseudo-documents of the
# preset's 200 sentences) and the model tags; with pseudo-documents off it
# is refused with a message that names the way out.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TAG="$(absolute "$2")"; CONFIG="$(absolute "$3")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 900 sentences: names (Ann, Bob, Paris) tagged B-PER / B-LOC, the rest O.
for split in train dev test; do
  for k in $(seq 900); do
    case $((k % 3)) in
      0) printf 'Ann NNP B-PER\nsaw VBD O\nBob NNP B-PER\n\n' ;;
      1) printf 'Bob NNP B-PER\nleft VBD O\nParis NNP B-LOC\n\n' ;;
      2) printf 'it PRP O\nrained VBD O\nin IN O\nParis NNP B-LOC\n\n' ;;
    esac
  done > $split.txt
done
SMALL=corpus.train=$PWD/train.txt,corpus.dev=$PWD/dev.txt,corpus.test=$PWD/test.txt
SMALL+=,features.num_buckets=65536,solver.max_passes=2,stacking.first_stage_passes=1
SMALL+=,corpus.retrain_on_train_and_dev=false,features.cluster_source.num_clusters=4

"$TRAIN" --config="$CONFIG" --set="$SMALL" --quiet --model=ner.model \
  --log=ner.jsonl > report.txt 2> err.txt || fail "no document marks: $(cat err.txt)"
grep -q 'FB1' report.txt || fail "no conlleval report: $(cat report.txt)"
printf 'Ann NNP\nleft VBD\n\n' | "$TAG" --model=ner.model > tagged.txt \
  || fail "the model does not tag"
[[ $(awk 'NF == 3' tagged.txt | wc -l) -eq 2 ]] || fail "tagged: $(cat tagged.txt)"

status=0
"$TRAIN" --config="$CONFIG" --set="$SMALL,corpus.format.sentences_per_document=0" \
  --quiet --model=off.model > /dev/null 2> err.txt || status=$?
[[ $status -ne 0 ]] || fail "one document and four folds accepted"
grep -q 'sentences_per_document' err.txt || fail "no way out named: $(cat err.txt)"
echo PASS
