#!/usr/bin/env bash
# train's named flags and --set on a toy corpus the test writes: a flag
# given with its "empty" value is honoured, not ignored (--max_passes=0 is
# refused by name; --eval_every=0, --threads=1 take effect), --set wins
# over the named flag of its field, a flag not given keeps the config's
# value, a flag given with the proto's default is still applied, a bad
# value names the flag, and the help is ASCII with the proto's defaults.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"
TAG="$(absolute "$2")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

for split in train test; do
  for k in $(seq 40); do
    printf 'w%d A\nw%d B\nw%d A\n\n' $((k % 5)) $((k % 3)) $((k % 7))
  done > toy_$split.txt
done
cat > toy.textproto <<CONFIG
name: "toy"
corpus {
  train: "$PWD/toy_train.txt"
  test: "$PWD/toy_test.txt"
  format { attribute_columns: [0] label_column: 1 tag_scheme: NONE }
}
features {
  num_buckets: 4096
  templates { name: "w[0]" parts { offset: 0 attribute: 0 } }
}
solver { name: "bcfw" lambda: 0.01 max_passes: 5 gap_check: 2 seed: 1 num_threads: 2 }
eval_every: 2
CONFIG
passes() { grep -c '"pass"' "$1"; }

status=0
"$TRAIN" --config=toy.textproto --max_passes=0 --quiet > out.txt 2> err.txt || status=$?
[[ $status -ne 0 ]] || fail "--max_passes=0 was ignored: the run trained"
grep -q 'max_passes must be positive, got 0' err.txt \
  || fail "--max_passes=0: unclear error: $(cat err.txt)"
[[ ! -e toy.model ]] || fail "--max_passes=0 wrote a model"

# Not given: the config's 5 passes.
"$TRAIN" --config=toy.textproto --quiet --log=a.jsonl > /dev/null 2>&1 || fail "plain run"
[[ $(passes a.jsonl) -eq 5 ]] || fail "the config's max_passes: $(passes a.jsonl) passes"

# Given: 3 passes; --set after it wins: 2.
"$TRAIN" --config=toy.textproto --quiet --max_passes=3 --log=b.jsonl > /dev/null 2>&1
[[ $(passes b.jsonl) -eq 3 ]] || fail "--max_passes=3: $(passes b.jsonl) passes"
"$TRAIN" --config=toy.textproto --quiet --max_passes=3 --set=solver.max_passes=2 \
  --log=c.jsonl > /dev/null 2>&1
[[ $(passes c.jsonl) -eq 2 ]] || fail "--set did not win: $(passes c.jsonl) passes"

# --loss=crf trains the CRF with svrg (the log's primal is its objective,
# which starts at log 2 per token here); with the config's bcfw it is
# trained by sag (below).
"$TRAIN" --config=toy.textproto --quiet --loss=crf --solver=svrg --lr=0.05 \
  --max_passes=4 --log=crf.jsonl --model=crf.model > /dev/null 2> err.txt \
  || fail "--loss=crf --solver=svrg: $(cat err.txt)"
grep -q 'svrg' crf.jsonl || fail "--loss=crf did not run svrg"
# tag --marginals prints TAG:P, P the CRF's marginal of the predicted tag:
# the tags are tag's own, and every P is a probability above 0 (brute force
# checks the values: python/max_marginals_test.cc).
"$TAG" --model=crf.model --input=toy_test.txt > plain.txt
"$TAG" --model=crf.model --input=toy_test.txt --marginals > marginals.txt
[[ $(sed 's/:[0-9.]*$//' marginals.txt | cmp - plain.txt && echo same) == same ]] \
  || fail "--marginals changed the tags: $(diff <(sed 's/:[0-9.]*$//' marginals.txt) plain.txt | head -3)"
awk 'NF { split($NF, f, ":"); if (f[2] <= 0 || f[2] > 1) exit 1 }' marginals.txt \
  || fail "--marginals: a probability outside (0, 1]: $(head -3 marginals.txt)"
[[ $(grep -c ':0\.[0-9]\{6\}$\|:1\.000000$' marginals.txt) -eq $(grep -c . plain.txt) ]] \
  || fail "--marginals: not every token has TAG:P"
# --label_marginals adds every label's LABEL:P after TAG:P (crf_test -v2):
# they sum to one, and the predicted tag's is its TAG:P.
"$TAG" --model=crf.model --input=toy_test.txt --label_marginals > labels.txt
awk 'FNR == NR { line[FNR] = $0; next }
  line[FNR] == "" { if ($0 != "") exit 1; next }
  {
    if (index($0, line[FNR] " ") != 1) exit 2
    n = split(substr($0, length(line[FNR]) + 2), field, " ")
    split(line[FNR], own, " "); split(own[length(own)], predicted, ":")
    sum = 0; found = 0
    for (k = 1; k <= n; ++k) {
      split(field[k], pair, ":"); sum += pair[2]
      if (pair[1] == predicted[1] && pair[2] == predicted[2]) found = 1
    }
    if (n < 2 || !found || sum < 0.9999 || sum > 1.0001) exit 3
  }' marginals.txt labels.txt \
  || fail "--label_marginals: $(head -3 labels.txt)"
# A hinge config (bcfw) asked for the CRF is trained by sag, and says so.
"$TRAIN" --config=toy.textproto --loss=crf --model=switched.model \
  > /dev/null 2> err.txt || fail "--loss=crf with bcfw: $(cat err.txt)"
grep -q 'training: solver sag' err.txt \
  || fail "--loss=crf with bcfw: no 'training: solver sag' line: $(cat err.txt)"
# svrg counts epochs of two passes over the data, and says so where it
# states its cap and where it stops; on the hinge it has no gap to stop on.
"$TRAIN" --config=toy.textproto --solver=svrg --lr=0.05 --max_passes=6 \
  > /dev/null 2> err.txt || fail "svrg: $(cat err.txt)"
grep -q 'up to 6 passes over the data (3 epochs of two; svrg has no duality gap to stop on)' err.txt \
  || fail "svrg's cap: $(grep training: err.txt)"
grep -q '^done: 3 epochs, ' err.txt || fail "svrg's stop: $(grep done: err.txt)"
"$TRAIN" --config=toy.textproto --loss=crf --solver=svrg --lr=0.05 \
  --max_passes=6 --gap_tolerance=1e-3 > /dev/null 2> err.txt \
  || fail "crf svrg: $(cat err.txt)"
grep -q 'until gap <= 0.001 (checked every [0-9]* epochs), at most 6 passes over the data (3 epochs of two)' err.txt \
  || fail "crf svrg's rule: $(grep training: err.txt)"

# --eval_every=0 (the config says 2): no pass but the last is scored.
"$TRAIN" --config=toy.textproto --quiet --eval_every=0 --log=d.jsonl > /dev/null 2>&1
[[ $(grep -c '"eval_score' d.jsonl) -eq 1 ]] \
  || fail "--eval_every=0 ignored: $(grep -c '"eval_score' d.jsonl) scored passes"
[[ $(grep -c '"eval_score' a.jsonl) -gt 1 ]] || fail "the config's eval_every=2 scored one pass"
# --eval_every=5, the proto's default, is still given: only pass 5 is scored.
"$TRAIN" --config=toy.textproto --quiet --eval_every=5 --log=e.jsonl > /dev/null 2>&1
[[ $(grep -c '"eval_score' e.jsonl) -eq 1 ]] \
  || fail "--eval_every=5 (the default) ignored: $(grep -c '"eval_score' e.jsonl) scored passes"

# A bad value names the flag and exits 2 before training.
status=0
"$TRAIN" --config=toy.textproto --sampling=sideways > /dev/null 2> err.txt || status=$?
[[ $status -eq 2 ]] || fail "--sampling=sideways: exit $status"
grep -q -- '--sampling' err.txt || fail "error does not name the flag: $(cat err.txt)"

# Help is plain ASCII (lambda, not the Greek letter) and shows the defaults.
"$TRAIN" --helpfull > help.txt 2>&1 || true
grep -q -- '--max_passes (Maximum passes. \[config: solver.max_passes\]); default: 100;' \
  help.txt || fail "no --max_passes help with its default: $(grep -- --max_passes help.txt)"
if LC_ALL=C grep -n '[^ -~[:space:]]' help.txt; then fail "help is not ASCII"; fi
echo PASS
