#!/usr/bin/env bash
# Exact attributes end to end: the crfsuite_attributes_exact preset (and
# the hashed preset with --set=features.exact=true,features.bias=false)
# trains on a small CRFsuite file the test writes and gives every distinct
# attribute a weight row of its own: the problem's dimension is
# rows × labels + labels² + 2 × labels with rows = the distinct attributes
# of the training file. The tags `tag` gives from the saved model are the
# ones training's in-memory model wrote for the test file.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TAG="$(absolute "$2")"; DUMP="$(absolute "$3")"
EXACT="$(absolute "$4")"; HASHED="$(absolute "$5")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Determiner, nouns, verb: B-NP I-NP... O, each token with its word, its
# suffix and its neighbours; words beyond the training vocabulary in test.
corpus() {  # corpus <sentences> <seed> <vocabulary size>
  awk -v n="$1" -v seed="$2" -v vocab="$3" 'BEGIN {
    srand(seed)
    split("the a this", det, " ")
    split("cat dog mat hat bird fox owl yak", noun, " ")
    split("sat ran saw ate", verb, " ")
    for (i = 0; i < n; ++i) {
      m = 0
      w[m++] = det[1 + int(rand() * 3)]
      k = 1 + int(rand() * 2)
      for (j = 0; j < k; ++j) w[m++] = noun[1 + int(rand() * vocab)]
      w[m++] = verb[1 + int(rand() * 4)]
      for (t = 0; t < m; ++t) {
        label = t == 0 ? "B-NP" : t + 1 < m ? "I-NP" : "O"
        line = label "\tw[0]=" w[t] "\ts[0]=" substr(w[t], length(w[t]))
        line = line (t == 0 ? "\t__BOS__" : "\tw[-1]=" w[t - 1])
        if (t + 1 < m) line = line "\tw[1]=" w[t + 1]
        print line
      }
      print ""
    }
  }'
}
corpus 80 1 5 > train.crfsuite
corpus 20 2 8 > test.crfsuite

# Rows: the distinct attribute names of the training file; 3 labels.
rows=$(cut -f2- train.crfsuite | tr '\t' '\n' | grep -v '^$' | sort -u | wc -l)
labels=3
dim=$((rows * labels + labels * labels + 2 * labels))
[[ $rows -gt 20 ]] || fail "only $rows attributes"

set_files="corpus.train=$PWD/train.crfsuite,corpus.test=$PWD/test.crfsuite"
"$TRAIN" --config="$EXACT" \
  --set="$set_files,solver.max_passes=20,predictions_path=$PWD/exact.pred" \
  --model=exact.model --log=exact.jsonl > exact.out 2> exact.err \
  || fail "training: $(cat exact.err)"
grep -q "^features: $rows distinct attributes, exact (a row each), dim $dim\$" \
  exact.err || fail "expected $rows rows (dim $dim): $(grep features: exact.err)"

# From the file as in memory.
"$TAG" --model=exact.model --reference < test.crfsuite > exact.ref \
  || fail "tag"
diff exact.pred exact.ref > /dev/null \
  || fail "tags from the file differ from training's"

# The hashed preset made exact by --set: the same rows and the same tags.
"$TRAIN" --config="$HASHED" \
  --set="$set_files,solver.max_passes=20,features.exact=true,features.bias=false" \
  --model=set.model --log=set.jsonl > set.out 2> set.err \
  || fail "training with --set: $(cat set.err)"
grep -q "^features: $rows distinct attributes, exact (a row each), dim $dim\$" \
  set.err || fail "--set: $(grep features: set.err)"
"$TAG" --model=set.model --reference < test.crfsuite | diff - exact.ref \
  > /dev/null || fail "--set tags differ from the preset's"

# dump reads the model and names its rows from the training file.
"$DUMP" --model=exact.model --names_from=train.crfsuite --top=3 > dump.txt \
  || fail "dump"
grep -q "w\[0\]=the" dump.txt || fail "dump names: $(head -30 dump.txt)"
echo PASS
