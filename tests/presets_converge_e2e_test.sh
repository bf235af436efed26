#!/usr/bin/env bash
# The POS preset as shipped stops on its certificate, not on its pass cap:
# on CoNLL-2000's POS tags (44 labels), and on joint POS|chunk tags (206
# labels over the first 1,000 sentences, the listed-transitions path), each
# run ends with a gap within the preset's 10% of the primal and the
# accuracy its solver gives.
set -euo pipefail

source base/require_corpus.sh conll2000/train.txt
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; POS_CONFIG="$(absolute "$2")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# check NAME MIN_ACCURACY: the run's `done:` line says it stopped on
# relative_gap_tolerance, its gap is within 10% of its primal, and its test
# accuracy is at least MIN_ACCURACY.
check() {
  local line
  line="$(grep '^done:' "$1.out")" || fail "$1: no summary line"
  [[ "$line" == *"(relative_gap_tolerance)"* ]] || fail "$1 did not stop on its certificate: $line"
  python3 - "$line" "$2" <<'PY' || fail "$1: $line"
import re, sys
line, minimum = sys.argv[1], float(sys.argv[2])
primal = float(re.search(r"primal ([0-9.e+-]+)", line).group(1))
gap = float(re.search(r"gap ([0-9.e+-]+)", line).group(1))
accuracy = float(re.search(r"test accuracy ([0-9.]+)%", line).group(1))
assert 0 <= gap <= 0.1 * primal, (gap, primal)
assert accuracy >= minimum, (accuracy, minimum)
PY
}

"$TRAIN" --config="$POS_CONFIG" --eval_every=0 --model=pos.model --log=pos.jsonl > pos.out 2>&1
check pos 98.1

for f in train test; do
  awk 'NF==3{print $1" "$2"|"$3} NF==0{print ""}' "$CHAINTAG_CORPORA/conll2000/$f.txt" > joint_$f.txt
done
"$TRAIN" --config="$POS_CONFIG" --eval_every=0 --max_train_sentences=1000 \
  --set=corpus.train="$PWD/joint_train.txt",corpus.test="$PWD/joint_test.txt" \
  --model=joint.model --log=joint.jsonl > joint.out 2>&1
grep -q "^corpus: 1000 training sentences, .* 206 labels" joint.out || fail "joint: $(grep '^corpus' joint.out)"
check joint 88.5
echo PASS
