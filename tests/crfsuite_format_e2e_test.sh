#!/usr/bin/env bash
# CRFsuite attribute files end to end: the crfsuite_attributes preset
# trains on a small corpus the test writes (comments, @weight:1, escapes,
# values), and tag reads the same format back: the labels, --reference's
# `reference TAB prediction` lines, --quiet --evaluate's report and the
# conlleval scores of --reference piped into evaluate, against figures
# computed by hand.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TAG="$(absolute "$2")"; EVALUATE="$(absolute "$3")"
CONFIG="$(absolute "$4")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# "the" begins a noun phrase, "cat" continues it, "sat" is outside; the
# other attributes (an escaped colon, a value, a space in a name) are noise
# every token shares.
T=$'\t'
for k in $(seq 200); do
  printf '# sentence %d\n@weight:1\n' "$k"
  printf 'B-NP\tw=the\tshared\\:x:0.5\tsp ace\r\n'
  printf 'I-NP\tw=cat\tshared\\:x:0.5\t\tsp ace\t# a comment\n'
  printf 'O\tw=sat\tshared\\:x:0.5\n\n\n'
done > train.crfsuite
# The second sentence's reference says O where the model will say B-NP.
printf 'B-NP\tw=the\nI-NP\tw=cat\nO\tw=sat\n\nO\tw=the\nI-NP\tw=cat\n' > test.crfsuite

"$TRAIN" --config="$CONFIG" \
  --set=corpus.train=$PWD/train.crfsuite,corpus.test=$PWD/test.crfsuite,features.num_buckets=65536,solver.max_passes=20,predictions_path=$PWD/predictions.txt \
  --quiet --model=m.model --log=m.jsonl > report.txt 2> err.txt \
  || fail "training: $(cat err.txt)"

"$TAG" --model=m.model < test.crfsuite > labels.txt || fail "tag"
printf 'B-NP\nI-NP\nO\n\nB-NP\nI-NP\n\n' | diff - labels.txt \
  || fail "labels differ"

"$TAG" --model=m.model --reference < test.crfsuite > reference.txt \
  || fail "tag --reference"
printf "B-NP${T}B-NP\nI-NP${T}I-NP\nO${T}O\n\nO${T}B-NP\nI-NP${T}I-NP\n\n" \
  | diff - reference.txt || fail "--reference differs"
# Training's test predictions are written the same way.
diff reference.txt predictions.txt || fail "training's predictions differ"

# By hand, labels in training order B-NP, I-NP, O: B-NP 1 of 2 predicted
# right, 1 reference; I-NP 2 of 2, 2; O 1 of 1, 2 references. Macro
# precision (0.5+1+1)/3, recall (1+1+0.5)/3, F1 (2/3+1+2/3)/3; 4 of 5
# items, 1 of 2 sequences.
"$TAG" --model=m.model --quiet --evaluate < test.crfsuite > evaluation.txt \
  || fail "tag --evaluate"
cat > expected.txt <<'END'
Performance by label (#match, #model, #ref) (precision, recall, F1):
    B-NP: (1, 2, 1) (0.5000, 1.0000, 0.6667)
    I-NP: (2, 2, 2) (1.0000, 1.0000, 1.0000)
    O: (1, 1, 2) (1.0000, 0.5000, 0.6667)
Macro-average precision, recall, F1: (0.833333, 0.833333, 0.777778)
Item accuracy: 4 / 5 (0.8000)
Instance accuracy: 1 / 2 (0.5000)
END
head -n 7 evaluation.txt | diff expected.txt - || fail "evaluation differs"
grep -q '^Elapsed time: .* \[sec\] (.* \[instance/sec\])$' evaluation.txt \
  || fail "no elapsed time: $(cat evaluation.txt)"

# conlleval: reference chunks NP(the cat) and NP(cat) (I-NP after O starts
# one), predicted NP(the cat) twice: 1 of 2 correct, 4 of 5 tokens.
"$EVALUATE" < reference.txt > conlleval.txt || fail "evaluate"
grep -q 'processed 5 tokens with 2 phrases; found: 2 phrases; correct: 1.' \
  conlleval.txt || fail "conlleval: $(cat conlleval.txt)"
grep -q 'accuracy:  80.00%; precision:  50.00%; recall:  50.00%; FB1:  50.00' \
  conlleval.txt || fail "conlleval: $(cat conlleval.txt)"

# Weights other than 1 are refused, naming the file and line.
printf 'B-NP\tw=the\n@weight:2\n' > weighted.crfsuite
status=0
"$TRAIN" --config="$CONFIG" --set=corpus.train=$PWD/weighted.crfsuite \
  --quiet --model=w.model > /dev/null 2> err.txt || status=$?
[[ $status -ne 0 ]] || fail "@weight:2 accepted"
grep -q "weighted.crfsuite:2: @weight:2: sequence weights other than 1" err.txt \
  || fail "weight error: $(cat err.txt)"
echo PASS
