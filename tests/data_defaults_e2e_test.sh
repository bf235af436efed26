#!/usr/bin/env bash
# A CRF++ or Wapiti user's own files trained by one command line with the
# crfpp.textproto preset: the columns and the scoring come from the file (a
# four-column file whose template reads column 2; POS-like labels scored by
# accuracy; untyped B/I labels as chunks), a Wapiti-style pattern file with
# blanks inside its macros trains, --set sets a repeated field and may be
# repeated, and the errors on bad input name the file and line once.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TAG="$(absolute "$2")"
PRESET="$(absolute "$3")"; CHUNKING="$(absolute "$4")"
PATTERN="$(absolute "$5")"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# `word chartype POS chunk`: "red" is I-NP after a determiner and B-ADJP
# after a verb, which only the POS column (2) of the word before tells.
for split in train test; do
  for k in $(seq 200); do
    case $((k % 3)) in
      0) printf 'the a DT B-NP\nred a JJ I-NP\ncar a NN I-NP\n\n' ;;
      1) printf 'It A PRP B-NP\nis a VBZ B-VP\nred a JJ B-ADJP\n\n' ;;
      2) printf 'a a DT B-NP\ncar a NN I-NP\nwas a VBD B-VP\nred a JJ B-ADJP\n\n' ;;
    esac
  done > $split.txt
done
cat > four.template <<'TEMPLATE'
# CRF++'s syntax, reading columns 0 and 2 of four.
U00:%x[0,0]
U01:%x[0,2]
U02:%x[-1,2]/%x[0,2]

B
TEMPLATE

# One line, no columns configured.
"$TRAIN" --config="$PRESET" --template_file=four.template \
  --set=corpus.train=$PWD/train.txt,corpus.test=$PWD/test.txt \
  --model=four.model --log=four.log > report.txt 2> err.txt ||
  fail "train: $(cat err.txt)"
[[ "$(head -1 err.txt)" == "read from the training file (the config names none): 4 columns, the label the last, %x[row,c] reading column c (0..2); labels B-X, I-X, O: IOB2 chunks, scored by conlleval F1" ]] ||
  fail "inferred: $(head -1 err.txt)"
grep -q 'FB1: 100.00' report.txt || fail "not learnt: $(cat report.txt)"
# The model knows the columns: tagging input without the label column.
printf 'the a DT\nred a JJ\n\nIt A PRP\nis a VBZ\nred a JJ\n\n' |
  "$TAG" --model=four.model > tagged.txt || fail "the model does not tag"
[[ "$(awk 'NF == 4 {print $4}' tagged.txt | tr '\n' ' ')" == \
   "B-NP I-NP B-NP B-VP B-ADJP " ]] || fail "tagged: $(cat tagged.txt)"

# POS-like labels: token accuracy.
printf 'U00:%%x[0,0]\nB\n' > word.template
awk 'NF {print $1, $3} !NF {print ""}' train.txt > pos.txt
"$TRAIN" --config="$PRESET" --template_file=word.template \
  --set=corpus.train=$PWD/pos.txt,corpus.test=$PWD/pos.txt \
  --model=pos.model --log=pos.log > /dev/null 2> err.txt || fail "pos: $(cat err.txt)"
grep -q "labels such as 'PRP' are not chunk tags: scored by token accuracy" err.txt ||
  fail "pos inferred: $(head -1 err.txt)"
grep -q '^done: .*test accuracy ' err.txt || fail "pos scored: $(grep done: err.txt)"

# Untyped B/I labels (a word segmenter's characters): chunks of one type.
printf 'a B\nb I\nc B\n\nd B\ne I\n\n' > seg.txt
"$TRAIN" --config="$PRESET" --template_file=word.template \
  --set=corpus.train=$PWD/seg.txt,corpus.test=$PWD/seg.txt \
  --model=seg.model --log=seg.log > /dev/null 2> err.txt || fail "seg: $(cat err.txt)"
grep -q 'labels B, I, O: IOB2 chunks of one type, scored by conlleval F1' err.txt ||
  fail "seg inferred: $(head -1 err.txt)"

# A Wapiti-style chunking pattern file: blanks inside the macros, `*` lines,
# %t and %m; word and POS in columns 0 and 2 of this file, so the POS column
# is picked with a --set list.
"$TRAIN" --config="$PRESET" --template_file="$PATTERN" \
  --set=corpus.train=$PWD/train.txt,corpus.test=$PWD/test.txt \
  --set=corpus.format.attribute_columns=[0,2],features.boundary_markers=wapiti \
  --model=wapiti.model --log=wapiti.log > report.txt 2> err.txt ||
  fail "wapiti pattern: $(cat err.txt)"
grep -q 'FB1: 100.00' report.txt || fail "not learnt: $(cat report.txt)"
grep -q '^read from the training file (the config names none): labels B-X' err.txt ||
  fail "columns given are not read from the file: $(head -1 err.txt)"

# --set on the preset with explicit columns: a list replaces them, and a
# second --set adds to the first.
"$TRAIN" --config="$CHUNKING" --template_file=four.template \
  --set=corpus.train=$PWD/train.txt --set=corpus.test=$PWD/test.txt \
  --set=corpus.format.attribute_columns=[0,1,2],corpus.format.label_column=3 \
  --model=set.model --log=set.log > report.txt 2> err.txt ||
  fail "--set lists: $(cat err.txt)"
grep -q 'FB1: 100.00' report.txt || fail "not learnt: $(cat report.txt)"
status=0
"$TRAIN" --config="$CHUNKING" --set=corpus.format.attribute_columns=[0,1 \
  > /dev/null 2> err.txt || status=$?
[[ $status -eq 2 ]] || fail "an open list: exit $status"
[[ "$(cat err.txt)" == "train: INVALID_ARGUMENT: \"corpus.format.attribute_columns=[0,1\": the list has no closing ']' (a list is [v1,v2,...])" ]] ||
  fail "open list: $(cat err.txt)"

# Errors name the file and line once.
printf 'the a DT B-NP\nred a JJ\n\n' > short.txt
status=0
"$TRAIN" --config="$PRESET" --template_file=four.template \
  --set=corpus.train=$PWD/short.txt --model=x.model --log=x.log \
  > /dev/null 2> err.txt || status=$?
[[ $status -ne 0 ]] || fail "a short line accepted"
[[ "$(cat err.txt)" == "train: INVALID_ARGUMENT: $PWD/short.txt:2: expected 4 fields, got 3 (every token line has the fields of the first, line 1)" ]] ||
  fail "short line: $(cat err.txt)"
printf 'U00:%%x[0,0]\nU09:%%x[0,3]\n' > wide.template
status=0
"$TRAIN" --config="$PRESET" --template_file=wide.template \
  --set=corpus.train=$PWD/train.txt --model=x.model --log=x.log \
  > /dev/null 2> err.txt || status=$?
[[ $status -ne 0 ]] || fail "a template reading the label accepted"
[[ "$(cat err.txt)" == "train: INVALID_ARGUMENT: $PWD/train.txt:1: template 'U09:%x[0,3]' (#1) reads attribute 3 but the sentence has 3 attributes" ]] ||
  fail "wide template: $(cat err.txt)"
printf 'U:a=%%x[ 0,0]\nU:b=%%x[0 ,0]\n' > blank.pattern
status=0
"$TRAIN" --config="$PRESET" --template_file=blank.pattern \
  --set=corpus.train=$PWD/train.txt --model=x.model --log=x.log \
  > /dev/null 2> err.txt || status=$?
[[ $status -ne 0 ]] || fail "a blank after a number accepted"
[[ "$(cat err.txt)" == "train: INVALID_ARGUMENT: ./blank.pattern:2: expected ',' (a blank may come before a number, not after it) in the macro at column 5: 'U:b=%x[0 ,0]'" ]] ||
  fail "blank after a number: $(cat err.txt)"
echo PASS
