#!/usr/bin/env bash
# Checkpoints and resume: a run interrupted (SIGINT) after a checkpoint and
# resumed with --resume writes the model the uninterrupted run writes, byte
# for byte, for each solver family and for the train + dev run of
# corpus.retrain_on_train_and_dev; the finished run leaves no checkpoint; a
# checkpoint that cannot be written is reported and the run goes on; a
# checkpoint of another config or a damaged one is refused by name.
set -euo pipefail

source base/require_corpus.sh conll2000/train.txt
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; CONFIG="$(absolute "$2")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

COMMON=(--config="$CONFIG" --max_train_sentences=300 --gap_tolerance=0
  --eval_every=0 --checkpoint_every=2 --quiet)

# check NAME WAIT_FOR FLAGS...: the uninterrupted run, then the same run
# stopped by SIGINT once WAIT_FOR exists (and a checkpoint), then resumed.
check() {
  local name=$1 wait_for=$2; shift 2
  rm -f ./*.model* ./*.log.jsonl*
  "$TRAIN" "${COMMON[@]}" "$@" --model=whole.model --log=whole.log.jsonl \
    > /dev/null 2> whole.err || fail "$name: the uninterrupted run failed: $(cat whole.err)"
  [[ ! -e whole.model.ckpt ]] || fail "$name: a finished run kept its checkpoint"
  "$TRAIN" "${COMMON[@]}" "$@" --model=run.model --log=run.log.jsonl \
    > /dev/null 2> run.err &
  local pid=$!
  for _ in $(seq 600); do
    [[ -f "$wait_for" && -f run.model.ckpt ]] && break
    sleep 0.02
  done
  kill -INT "$pid" 2> /dev/null || true
  local status=0
  wait "$pid" || status=$?
  [[ "$status" == 130 ]] || fail "$name: exit status $status: $(cat run.err)"
  grep -q '^checkpoint of pass [0-9]*: .*run.model.ckpt' run.err \
    || fail "$name: no checkpoint line: $(cat run.err)"
  "$TRAIN" "${COMMON[@]}" "$@" --model=run.model --log=run.log.jsonl \
    --resume=run.model.ckpt > /dev/null 2> resume.err \
    || fail "$name: resume failed: $(cat resume.err)"
  cmp -s whole.model run.model || fail "$name: the resumed model differs"
  # The logs agree but for the clock.
  diff <(sed -E 's/"(evaluation_)?seconds":[^,}]*,?//g' whole.log.jsonl) \
    <(sed -E 's/"(evaluation_)?seconds":[^,}]*,?//g' run.log.jsonl) > /dev/null \
    || fail "$name: the resumed log differs"
  [[ ! -e run.model.ckpt ]] || fail "$name: the resumed run kept its checkpoint"
  echo "ok: $name"
}

check bcfw run.model.ckpt --max_passes=60
check pairwise_gap_cache run.model.ckpt --max_passes=60 --step=pairwise \
  --sampling=gap --cache=true --weighted_averaging=false
check minibatch run.model.ckpt --max_passes=60 --set=solver.minibatch=8 \
  --threads=2
# r fixed: measured, it can differ between the two runs on a busy machine.
check mp_bcfw run.model.ckpt --max_passes=30 --solver=mp_bcfw \
  --set=solver.mp_bcfw.oracle_cost=4
check svrg run.model.ckpt --max_passes=30 --solver=svrg --lr=0.02
check casimir_svrg run.model.ckpt --max_passes=30 --solver=casimir_svrg \
  --lr=0.02 --casimir_variant=adapt --warm_start=extrapolation
# Stopped in the train + dev run: the resume reuses the train-only model.
check sag run.model.ckpt --max_passes=30 --loss=crf --l1=0.0001
check sag_catalyst run.model.ckpt --max_passes=30 --loss=crf --l1=0.0001 \
  --set=solver.sag.catalyst_kappa=0.05,solver.sag.catalyst_passes=3
check retrain run.log.jsonl.train_and_dev --max_passes=40 \
  --set=corpus.dev_fraction=0.2 --retrain_on_train_and_dev=true
cmp -s whole.model.train_only run.model.train_only \
  || fail "retrain: the train-only models differ"

# A checkpoint that cannot be written (a folder where it goes) does not end
# the run: the run says so and writes the model it trains.
rm -f ./*.model* ./*.log.jsonl*
"$TRAIN" "${COMMON[@]}" --max_passes=6 --model=whole.model \
  --log=whole.log.jsonl > /dev/null 2> whole.err \
  || fail "the uninterrupted run failed: $(cat whole.err)"
mkdir run.model.ckpt
"$TRAIN" "${COMMON[@]}" --max_passes=6 --model=run.model \
  --log=run.log.jsonl > /dev/null 2> blocked.err \
  || fail "a checkpoint that could not be written ended the run: $(cat blocked.err)"
grep -q '^warning: the checkpoint of pass [0-9]* was not written: .*run.model.ckpt' \
  blocked.err || fail "no warning for the checkpoint not written: $(cat blocked.err)"
cmp -s whole.model run.model \
  || fail "the run whose checkpoints failed wrote another model"
rmdir run.model.ckpt

# Refused: another config's checkpoint, and a damaged file.
rm -f ./*.model* ./*.log.jsonl*
"$TRAIN" "${COMMON[@]}" --max_passes=400 --model=run.model \
  --log=run.log.jsonl > /dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do [[ -f run.model.ckpt ]] && break; sleep 0.02; done
kill -INT "$pid" 2> /dev/null || true
wait "$pid" || true
cp run.model.ckpt kept.ckpt
if "$TRAIN" "${COMMON[@]}" --max_passes=400 --lambda=0.01 --model=run.model \
  --log=run.log.jsonl --resume=kept.ckpt 2> other.err; then
  fail "a checkpoint of another config was accepted"
fi
grep -q 'kept.ckpt: a checkpoint of another config' other.err \
  || fail "no other-config message: $(cat other.err)"
head -c 1000 kept.ckpt > cut.ckpt
if "$TRAIN" "${COMMON[@]}" --max_passes=400 --model=run.model \
  --log=run.log.jsonl --resume=cut.ckpt 2> cut.err; then
  fail "a damaged checkpoint was accepted"
fi
grep -q 'cut.ckpt: not a valid chaintag checkpoint' cut.err \
  || fail "no damaged-file message: $(cat cut.err)"
echo PASS
