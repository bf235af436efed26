#!/usr/bin/env bash
# Ctrl-C and SIGTERM during `train`: the run stops after the current block
# step, certifies its gap, writes the model (which `tag` then reads) and the
# log, says where, and exits 130 or 143. Also for a `lambda: "path"` run
# (regpath keeps the breakpoints so far).
set -euo pipefail

source base/require_corpus.sh conll2000/train.txt
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TAG="$(absolute "$2")"; CONFIG="$(absolute "$3")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Runs train in the background until it reports a pass (or a breakpoint),
# then sends the signal; prints the exit status.
interrupt() {
  local signal=$1; shift
  rm -f run.log.jsonl
  "$TRAIN" --config="$CONFIG" --max_train_sentences=300 --max_passes=100000 \
    --gap_tolerance=0 --eval_every=0 --model=run.model --log=run.log.jsonl \
    "$@" > out.txt 2> err.txt &
  local pid=$!
  for _ in $(seq 600); do
    grep -q -E '^(pass|path|training: regularization path)' err.txt 2> /dev/null && break
    sleep 0.1
  done
  kill "-$signal" "$pid"
  local status=0
  wait "$pid" || status=$?
  echo "$status"
}

status=$(interrupt INT)
[[ "$status" == 130 ]] || fail "SIGINT exit status $status: $(cat err.txt)"
grep -q '^interrupted at pass [0-9]*; model written to .*run.model$' err.txt \
  || fail "no interruption line: $(tail -3 err.txt)"
tail -1 run.log.jsonl | grep -q '"gap_exact":true' \
  || fail "the last record has no certified gap: $(tail -1 run.log.jsonl)"
head -20 "$CHAINTAG_CORPORA/conll2000/test.txt" | "$TAG" --model=run.model \
  > tagged.txt || fail "the interrupted model does not tag"
[[ $(grep -c ' [BIO]' tagged.txt) -ge 10 ]] || fail "no tags"

status=$(interrupt TERM --set=solver.minibatch=8)
[[ "$status" == 143 ]] || fail "SIGTERM exit status $status: $(cat err.txt)"
grep -q '^interrupted at pass' err.txt || fail "no interruption line (TERM)"

status=$(interrupt INT --set=lambda=path,corpus.dev_fraction=0.2,solver.path.lambda_max=0.01,solver.path.epsilon=0.001,solver.path.lambda_min=1e-9)
[[ "$status" == 130 ]] || fail "path: exit status $status: $(cat err.txt)"
grep -q '^interrupted at pass' err.txt || fail "path: no interruption line"
[[ -s run.model ]] || fail "path: no model"
echo PASS
