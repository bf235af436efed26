#!/usr/bin/env bash
# Distributed training on MPI: `mpirun -np K train_mpi --distributed`
# writes the model `train --threads=2` (and 3) writes with the same τ and seed,
# byte for byte, and the same log but for the clock, at K = 2 and 3; the
# other ranks write nothing; a rank that dies ends the job with an error
# instead of a hang; unsupported runs are refused by name.
set -euo pipefail

source base/require_corpus.sh conll2000/train.txt
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TRAIN_MPI="$(absolute "$2")"; CONFIG="$(absolute "$3")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Root in CI; more ranks than cores; no network but loopback; Open MPI's
# session files in the test's own directory.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_oob_tcp_if_include=lo TMPDIR="$TEST_TMPDIR"
# Under --config=asan, Open MPI's own allocations (its plugins, unloaded at
# exit) look like leaks: the ranks run without the leak check, which the
# threaded runs and the solver tests keep; memory errors are still reported.
MPIRUN=(env "ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  mpirun --bind-to none)

COMMON=(--config="$CONFIG" --max_train_sentences=500 --max_passes=6
  --gap_check=3 --eval_every=2 --set=solver.minibatch=16 --quiet)

"$TRAIN" "${COMMON[@]}" --threads=2 --model=threads.model \
  --log=threads.log.jsonl > threads.out 2> threads.err \
  || fail "the threaded run failed: $(cat threads.err)"
# Three threads merge the rounds in three parts: the same model.
"$TRAIN" "${COMMON[@]}" --threads=3 --model=threads3.model \
  --log=threads3.log.jsonl > /dev/null 2> threads3.err \
  || fail "the three-thread run failed: $(cat threads3.err)"
cmp -s threads.model threads3.model || fail "--threads=3: the model differs"
for ranks in 2 3; do
  mkdir -p "ranks$ranks" && cd "ranks$ranks"
  timeout 300 "${MPIRUN[@]}" -np "$ranks" "$TRAIN_MPI" --distributed \
    "${COMMON[@]}" --threads=1 --model=mpi.model --log=mpi.log.jsonl \
    > mpi.out 2> mpi.err || fail "mpirun -np $ranks failed: $(cat mpi.err)"
  cmp -s ../threads.model mpi.model || fail "-np $ranks: the model differs"
  diff <(sed -E 's/"(evaluation_)?seconds":[^,}]*,?//g' ../threads.log.jsonl) \
    <(sed -E 's/"(evaluation_)?seconds":[^,}]*,?//g' mpi.log.jsonl) > /dev/null \
    || fail "-np $ranks: the log differs"
  cmp -s ../threads.out mpi.out || fail "-np $ranks: the test report differs"
  [[ "$(ls)" == "$(printf 'mpi.err\nmpi.log.jsonl\nmpi.model\nmpi.out')" ]] \
    || fail "-np $ranks: unexpected files: $(ls)"
  cd ..
  echo "ok: -np $ranks equals --threads=2"
done

# One rank per machine with threads inside each (here oversubscribed):
# the rounds' parts on every rank's threads, the same model.
timeout 300 "${MPIRUN[@]}" -np 2 "$TRAIN_MPI" --distributed "${COMMON[@]}" \
  --threads=2 --model=hybrid.model --log=hybrid.log.jsonl \
  > hybrid.out 2> hybrid.err || fail "-np 2 --threads=2 failed: $(cat hybrid.err)"
cmp -s threads.model hybrid.model || fail "-np 2 --threads=2: the model differs"
echo "ok: -np 2 with two threads a rank equals --threads=2"

# Each rank reads only its shard, yet numbers the labels, holds out
# corpus.dev_fraction's dev sentences, counts the training words for
# clusters and gathers the feature statistics as one process does.
sed 's/^features {/features {\n  cluster_source { attribute: 0 num_clusters: 20 }/' \
  "$CONFIG" > clusters.textproto
grep -q cluster_source clusters.textproto || fail "no cluster_source added"
SHARDED=(--config=clusters.textproto --max_train_sentences=500 --max_passes=3
  --eval_every=2 --set=solver.minibatch=16,corpus.dev_fraction=0.2 --quiet)
"$TRAIN" "${SHARDED[@]}" --threads=2 --model=dev_threads.model \
  --log=dev_threads.log.jsonl > dev_threads.out 2> dev_threads.err \
  || fail "the threaded dev run failed: $(cat dev_threads.err)"
grep -q '"eval_metric":"dev_F1"' dev_threads.log.jsonl \
  || fail "the dev run scored no dev split"
timeout 300 "${MPIRUN[@]}" -np 2 "$TRAIN_MPI" --distributed "${SHARDED[@]}" \
  --threads=1 --model=dev_mpi.model --log=dev_mpi.log.jsonl \
  > dev_mpi.out 2> dev_mpi.err || fail "the dev run failed: $(cat dev_mpi.err)"
cmp -s dev_threads.model dev_mpi.model || fail "dev and clusters: the model differs"
cmp -s dev_threads.out dev_mpi.out || fail "dev and clusters: the report differs"
echo "ok: sharded reading with dev_fraction and clusters equals --threads=2"

# A rank killed mid-run: mpirun ends the job with an error.
"${MPIRUN[@]}" -np 2 "$TRAIN_MPI" --distributed "${COMMON[@]}" \
  --max_passes=100000 --gap_tolerance=0 --model=killed.model \
  > /dev/null 2> killed.err &
mpirun_pid=$!
victim=""
for _ in $(seq 600); do
  # A rank: a child of mpirun (whose own command line also matches).
  victim="$(pgrep -P "$mpirun_pid" -f -n -- "train_mpi" || true)"
  [[ -n "$victim" ]] && break
  sleep 0.05
done
[[ -n "$victim" ]] || fail "no rank started"
sleep 1
kill -KILL "$victim"
status=0
for _ in $(seq 1200); do
  kill -0 "$mpirun_pid" 2> /dev/null || break
  sleep 0.05
done
if kill -0 "$mpirun_pid" 2> /dev/null; then
  kill -KILL "$mpirun_pid"
  fail "the job hung after a rank died"
fi
wait "$mpirun_pid" || status=$?
[[ "$status" != 0 ]] || fail "a dead rank went unreported"
grep -qi "signal 9\|killed" killed.err || fail "no word of the dead rank: $(cat killed.err)"
[[ ! -e killed.model ]] || fail "a model was written by a failed job"
echo "ok: a dead rank ends the job ($status)"

# Refusals.
"${MPIRUN[@]}" -np 2 "$TRAIN_MPI" --distributed --config="$CONFIG" \
  --max_train_sentences=50 --quiet > /dev/null 2> plain.err \
  && fail "τ = 1 was accepted"
grep -q "minibatch" plain.err || fail "τ = 1 refused without a reason: $(cat plain.err)"
"$TRAIN" --distributed "${COMMON[@]}" > /dev/null 2> nompi.err \
  && fail "train without MPI accepted --distributed"
grep -q "train_mpi" nompi.err || fail "no pointer to train_mpi: $(cat nompi.err)"
echo "ok: refusals"
