#!/usr/bin/env bash
# serve's page in a browser: train a small POS tagger and chunker into a
# bundle (as tag_pipeline_e2e_test.sh does), serve it on a free port, and
# let serve_browser_test.js drive the page in Chromium against the JSON
# API; then SIGTERM must stop the server with status 0.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
source base/require_corpus.sh conll2000/test.txt
# Chromium, Node.js and playwright-core are what ./bazelw installs for
# this target; without them the test fails rather than passing unchecked.
HOW="run it through ./bazelw test //tests:serve_browser_test, which installs Chromium, Node.js and playwright-core"
[[ -x /usr/bin/chromium ]] || fail "/usr/bin/chromium not found: $HOW"
command -v node > /dev/null || fail "node not found: $HOW"
command -v npm > /dev/null || fail "npm not found: $HOW"
[[ -f "$(npm root -g)/playwright-core/package.json" ]] \
  || fail "playwright-core not found in $(npm root -g): $HOW"

absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; SERVE="$(absolute "$2")"
POS_CONFIG="$(absolute "$3")"; CHUNK_CONFIG="$(absolute "$4")"
DRIVER="$(absolute "$5")"
cd "$TEST_TMPDIR"
# Chromium keeps its profile and caches under HOME, which the test
# sandbox may leave unset or read-only.
export HOME="$TEST_TMPDIR"

mkdir -p bundle
"$TRAIN" --config="$POS_CONFIG" --max_train_sentences=500 --max_passes=3 \
  --eval_every=0 --model=bundle/pos.model --log=pos.jsonl --quiet > /dev/null
"$TRAIN" --config="$CHUNK_CONFIG" --max_train_sentences=500 --max_passes=3 \
  --eval_every=0 --model=bundle/chunk.model --log=chunk.jsonl --quiet > /dev/null
cat > bundle/bundle.textproto <<'MANIFEST'
name: "small"
stages { name: "pos" model: "pos.model" inputs { column: "word" } writes: "pos" }
stages {
  name: "chunk"
  model: "chunk.model"
  inputs { column: "word" }
  inputs { column: "pos" }
  writes: "chunk"
}
MANIFEST

# A low token limit, so that the page's error case is a real 413.
MAX_TOKENS=50
"$SERVE" --bundle=bundle --port=0 --port_file=port.txt --max_tokens=$MAX_TOKENS \
  2> serve.log &
server=$!
trap 'kill "$server" 2> /dev/null || true' EXIT
# The port file appears once the server listens (a minute at most).
for _ in $(seq 600); do
  [[ -s port.txt ]] && break
  kill -0 "$server" 2> /dev/null || fail "serve exited before listening: $(cat serve.log)"
  sleep 0.1
done
PORT="$(cat port.txt 2> /dev/null || true)"
[[ "$PORT" =~ ^[0-9]+$ ]] || fail "no port in port.txt ('$PORT'): $(cat serve.log)"
grep -qF "serve: listening on http://127.0.0.1:$PORT" serve.log \
  || fail "serve's start line: $(cat serve.log)"

node "$DRIVER" "http://127.0.0.1:$PORT" "$MAX_TOKENS" || fail "the page (serve.log: $(cat serve.log))"

kill -TERM "$server"
status=0
wait "$server" || status=$?
trap - EXIT
[[ $status -eq 0 ]] || fail "serve exited with status $status after SIGTERM: $(cat serve.log)"
echo "PASS"
