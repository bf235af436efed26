#!/usr/bin/env bash
# compare_solvers end to end on CoNLL-2000 (100 sentences, 4 passes, two
# runs × two seeds): every model, log, plot and summary row is written, the
# table names both runs, and a bad run spec fails before any training;
# a regularization-path preset (OCR-small, order 2) compares at a fixed λ,
# and --set reaches any config field; the help is ASCII.
set -euo pipefail

source base/require_corpus.sh conll2000/train.txt
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
COMPARE="$(absolute "$1")"; CONFIG="$(absolute "$2")"; PATH_CONFIG="$(absolute "$3")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$COMPARE" --config="$CONFIG" --max_train_sentences=100 --max_passes=4 \
  --gap_check=2 --gap_tolerance=0 --eval_every=2 --seeds=1,2 \
  --runs='bcfw:sampling=uniform;bcfw:sampling=permutation,label=perm' \
  --out=cmp > table.txt 2> err.txt || fail "run failed: $(cat err.txt)"
for stem in bcfw_sampling_uniform perm; do
  for seed in 1 2; do
    [[ -s cmp/$stem.seed$seed.model ]] || fail "no $stem.seed$seed.model"
    grep -q '"pass":4' cmp/$stem.seed$seed.log.jsonl || fail "log lacks pass 4"
  done
done
for svg in gap_vs_passes gap_vs_seconds eval_vs_passes; do
  grep -q '</svg>' cmp/$svg.svg || fail "$svg.svg incomplete"
  grep -q '<polyline' cmp/$svg.svg || fail "$svg.svg has no curve"
done
[[ $(wc -l < cmp/summary.tsv) -eq 5 ]] || fail "summary.tsv: expected 5 lines"
grep -q '^perm	2	4	' cmp/summary.tsv || fail "summary.tsv lacks perm seed 2"
grep -q '^bcfw:sampling=uniform ' table.txt || fail "table lacks the first run"
grep -q '^perm ' table.txt || fail "table lacks perm"

# Re-plotting reads the same logs back.
"$COMPARE" --config="$CONFIG" --seeds=1,2 --out=cmp --plot_only \
  --runs='bcfw:sampling=uniform;bcfw:sampling=permutation,label=perm' \
  > replot.txt 2> /dev/null || fail "--plot_only failed"
diff <(sed 1d table.txt) <(sed 1d replot.txt) > /dev/null \
  || fail "--plot_only table differs"

# A typo in a spec fails before training, naming the field.
if "$COMPARE" --config="$CONFIG" --runs='bcfw:samplig=gap' --out=bad \
  > /dev/null 2> err.txt; then
  fail "bad spec accepted"
fi
grep -q 'samplig' err.txt || fail "error does not name the field: $(cat err.txt)"
[[ ! -e bad ]] || fail "output directory created for a bad spec"
# A preset that chooses λ along the regularization path is compared at a
# fixed λ, and says so; --set reaches any field of every run.
"$COMPARE" --config="$PATH_CONFIG" --runs='bcfw;bcfw:step=fw,label=fw' \
  --max_passes=2 --gap_check=1 --lambda=0.01 --set=solver.num_threads=1 \
  --out=path > path_table.txt 2> err.txt || fail "path preset failed: $(cat err.txt)"
grep -q 'the runs compare at the fixed lambda = 0.01' err.txt \
  || fail "no word of the fixed lambda: $(cat err.txt)"
grep -q '"pass":2' path/fw.seed1.log.jsonl || fail "path preset: log lacks pass 2"
grep -q '^fw ' path_table.txt || fail "path preset: table lacks fw"
"$COMPARE" --config="$CONFIG" --runs=bcfw --max_train_sentences=50 \
  --max_passes=1 --set=model.order=2 --out=order2 > /dev/null 2> err.txt \
  || fail "--set=model.order=2: $(cat err.txt)"
"$COMPARE" --config="$CONFIG" --runs=bcfw --set=model.oder=2 --out=bad \
  > /dev/null 2> err.txt && fail "--set with a typo accepted"
grep -q 'oder' err.txt || fail "--set error does not name the field: $(cat err.txt)"

"$COMPARE" --helpfull > help.txt 2>&1 || true
grep -q -- '--lambda (Regularisation lambda' help.txt || fail "no --lambda help"
if LC_ALL=C grep -n '[^ -~[:space:]]' help.txt; then fail "help is not ASCII"; fi
echo PASS
