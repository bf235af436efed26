#!/usr/bin/env bash
# A CRF++ template file end to end: a config in one directory names its
# template file relative to itself, train expands it and the model tags
# without it; --template_file names one relative to the caller; a bad line
# is refused naming the file and line.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TAG="$(absolute "$2")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# "red" is B-NP after "the" and O after "is": only the conjunction of the
# previous word and the word (U01) tells them apart.
for split in train test; do
  for k in $(seq 300); do
    case $((k % 3)) in
      0) printf 'the DT O\nred JJ B-NP\ncar NN I-NP\n\n' ;;
      1) printf 'it PRP B-NP\nis VBZ O\nred JJ O\n\n' ;;
      2) printf 'the DT O\ncar NN B-NP\nis VBZ O\nred JJ O\n\n' ;;
    esac
  done > $split.txt
done
mkdir -p conf/tpl run
cat > conf/tpl/small.template <<'TEMPLATE'
# Unigram
U00:%x[0,0]
U01:%x[-1,0]/%x[0,0]   # a comment after a blank
U02:%m[0,1,"^[A-Z]"]

# Bigram
B
TEMPLATE
cat > conf/small.textproto <<CONFIG
name: "small"
corpus {
  train: "$PWD/train.txt"
  test: "$PWD/test.txt"
  format { attribute_columns: [0, 1] label_column: 2 tag_scheme: IOB2 }
}
features {
  num_buckets: 4096
  bias: false
  boundary_markers: NUMBERED
  template_file: "tpl/small.template"
}
solver { lambda: 0.01 max_passes: 15 num_threads: 1 }
CONFIG

# From another directory: the template file is found beside the config.
(cd run && "$TRAIN" --config=../conf/small.textproto --quiet \
  --model=small.model > report.txt 2> err.txt) || fail "train: $(cat run/err.txt)"
grep -q 'FB1: 100.00' run/report.txt || fail "not learnt: $(cat run/report.txt)"
mv conf/tpl/small.template conf/tpl/moved.template
printf 'the DT\nred JJ\n\nit PRP\nis VBZ\nred JJ\n\n' |
  "$TAG" --model=run/small.model > tagged.txt || fail "the model does not tag"
[[ "$(awk 'NF == 3 {print $3}' tagged.txt | tr '\n' ' ')" == \
   "O B-NP B-NP O O " ]] || fail "tagged: $(cat tagged.txt)"

# --template_file is relative to where the user stands, and replaces the
# config's.
cp conf/tpl/moved.template mine.template
"$TRAIN" --config=conf/small.textproto --template_file=mine.template --quiet \
  --model=flag.model > flag.txt 2> err.txt || fail "--template_file: $(cat err.txt)"
grep -q 'FB1: 100.00' flag.txt || fail "not learnt: $(cat flag.txt)"

# The config's own path is gone now: the error names it.
status=0
"$TRAIN" --config=conf/small.textproto --quiet --model=x.model \
  > /dev/null 2> err.txt || status=$?
[[ $status -ne 0 ]] || fail "a missing template file accepted"
grep -q 'conf/tpl/small.template' err.txt || fail "not named: $(cat err.txt)"

# A bad macro: file and line.
printf 'U00:%%x[0,0]\n\nU01:%%x[0,0\n' > bad.template
status=0
"$TRAIN" --config=conf/small.textproto --template_file=bad.template --quiet \
  --model=x.model > /dev/null 2> err.txt || status=$?
[[ $status -ne 0 ]] || fail "a bad template accepted"
grep -q 'bad.template:3: ' err.txt || fail "no file:line: $(cat err.txt)"
echo PASS
