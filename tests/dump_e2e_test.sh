#!/usr/bin/env bash
# dump end to end: a model trained from a CRF++ template with
# model.keep_feature_names names the attribute that decides its labels, and
# a model trained without names gets the same ones back from its training
# file through --names_from.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; DUMP="$(absolute "$2")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# "red" is B-NP after "the" and O after "is": the conjunctions U01 tell
# them apart, and weigh most for their labels (checked by hand: "the/red"
# for B-NP, "is/red" for O, "red/car" for I-NP).
for k in $(seq 300); do
  case $((k % 3)) in
    0) printf 'the DT O\nred JJ B-NP\ncar NN I-NP\n\n' ;;
    1) printf 'it PRP B-NP\nis VBZ O\nred JJ O\n\n' ;;
    2) printf 'the DT O\ncar NN B-NP\nis VBZ O\nred JJ O\n\n' ;;
  esac
done > train.txt
cat > small.template <<'TEMPLATE'
U00:%x[0,0]
U01:%x[-1,0]/%x[0,0]
B
TEMPLATE
cat > small.textproto <<CONFIG
name: "small"
corpus {
  train: "$PWD/train.txt"
  format { attribute_columns: [0, 1] label_column: 2 tag_scheme: IOB2 }
}
features { num_buckets: 65536 bias: false boundary_markers: NUMBERED
           template_file: "small.template" }
model { keep_feature_names: true }
solver { lambda: 0.01 max_passes: 20 num_threads: 1 }
CONFIG

"$TRAIN" --config=small.textproto --quiet --model=named.model 2> err.txt \
  || fail "train: $(cat err.txt)"
"$DUMP" --model=named.model --top=1 > named.txt || fail "dump failed"
grep -q '^attribute names: .* from the model file$' named.txt \
  || fail "no names kept: $(head -3 named.txt)"
# The first attribute of B-NP and of I-NP, as CRF++ spells them.
top() { awk -v label="$1" '$0 == "top attributes of " label ":" {getline; print $2}' "$2"; }
[[ "$(top B-NP named.txt)" == "U01:the/red" ]] \
  || fail "B-NP's top attribute: $(top B-NP named.txt)"
[[ "$(top O named.txt)" == "U01:is/red" ]] \
  || fail "O's top attribute: $(top O named.txt)"
[[ "$(top I-NP named.txt)" == "U01:red/car" ]] \
  || fail "I-NP's top attribute: $(top I-NP named.txt)"
grep -q '^  O --> I-NP: ' named.txt || fail "no transitions"

"$TRAIN" --config=small.textproto --set=model.keep_feature_names=false \
  --quiet --model=anonymous.model 2> err.txt || fail "train: $(cat err.txt)"
"$DUMP" --model=anonymous.model --top=1 > anonymous.txt
grep -q '^attribute names: not known' anonymous.txt \
  || fail "names where none were kept"
[[ "$(top B-NP anonymous.txt)" == bucket ]] || fail "not a bucket: $(top B-NP anonymous.txt)"
"$DUMP" --model=anonymous.model --top=1 --names_from=train.txt > recovered.txt
# Names aside, the two models are the same, so are their dumps.
diff <(sed 1,2d named.txt) <(sed 1,2d recovered.txt) > /dev/null \
  || fail "recovered names differ: $(diff <(sed 1,2d named.txt) <(sed 1,2d recovered.txt) | head)"
echo PASS
