# Sourced by the end-to-end tests that read the staged corpora, from the
# directory Bazel starts them in:
#   source base/require_corpus.sh conll2000/train.txt
# Fails the test, saying how to stage the corpora or leave such tests out,
# when $CHAINTAG_CORPORA does not hold that file.
if [[ -z "${CHAINTAG_CORPORA:-}" || ! -f "$CHAINTAG_CORPORA/$1" ]]; then
  echo "FAIL: $1 not found under \$CHAINTAG_CORPORA (${CHAINTAG_CORPORA:-unset}):" \
    "this test needs the staged corpora (../shared/corpora beside the workspace," \
    "which ./bazelw passes to tests); leave such tests out with" \
    "--test_tag_filters=-requires-corpora" >&2
  exit 1
fi
