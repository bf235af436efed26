#!/usr/bin/env bash
# serve end to end, over loopback: train a small POS tagger and chunker
# (presets, 500 sentences, 3 passes) into a bundle, serve it, and check the
# endpoints with curl; /v1/tag's sentences byte for byte against
# `tag --pipeline --format=json` on the same text; the errors of the API;
# abuse (a slow client, a 100 MB body, 10,000 dropped connections), after
# each of which the server still answers right; load with malformed requests
# mixed in; reloads under load (every answer wholly from one model); a
# broken model's reload refused; SIGTERM under load.
set -euo pipefail

source base/require_corpus.sh conll2000/test.txt
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN="$(absolute "$1")"; TAG="$(absolute "$2")"
SERVE="$(absolute "$3")"; LOAD="$(absolute "$4")"
POS_CONFIG="$(absolute "$5")"; CHUNK_CONFIG="$(absolute "$6")"
# Enough requests at 64 connections for 1% malformed ones to be hundreds
# (the load's rates: docs/experiments.md#serving).
LOAD_REQUESTS=100000
TEST="$CHAINTAG_CORPORA/conll2000/test.txt"
cd "$TEST_TMPDIR"
fail() {
  echo "FAIL: $*" >&2
  [[ -f serve.log ]] && tail -20 serve.log >&2
  exit 1
}

SERVER_PID=""
cleanup() { [[ -n "$SERVER_PID" ]] && kill -KILL "$SERVER_PID" 2> /dev/null || true; }
trap cleanup EXIT

# ---- the bundle, and a second chunker (one more pass) for the reload ----
mkdir -p bundle
"$TRAIN" --config="$POS_CONFIG" --max_train_sentences=500 --max_passes=3 \
  --eval_every=0 --model=bundle/pos.model --log=pos.jsonl --quiet > /dev/null
"$TRAIN" --config="$CHUNK_CONFIG" --max_train_sentences=500 --max_passes=3 \
  --eval_every=0 --model=bundle/chunk.model --log=chunk.jsonl --quiet > /dev/null
"$TRAIN" --config="$CHUNK_CONFIG" --max_train_sentences=500 --max_passes=4 \
  --eval_every=0 --model=chunk4.model --log=chunk4.jsonl --quiet > /dev/null
cp bundle/chunk.model chunk3.model
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
mkdir -p bundle4 && cp bundle/bundle.textproto bundle/pos.model bundle4/
cp chunk4.model bundle4/chunk.model

# ---- texts and the CLI's answers ----
# Test sentences as raw text, one a line (the tokens joined by spaces).
awk 'BEGIN { RS = ""; FS = "\n" } {
       line = ""; for (i = 1; i <= NF; ++i) { split($i, f, " ");
       line = line (i > 1 ? " " : "") f[1] } print line }' "$TEST" > all.txt
head -50 all.txt > text50.txt
sed -n '51,250p' all.txt > load.txt
# One body: the 50 lines; its expected "sentences": the CLI's objects.
python3 -c 'import json, sys; print(json.dumps({"text": open(sys.argv[1]).read()}))' \
  text50.txt > text50.body
"$TAG" --pipeline=bundle --format=json < text50.txt > text50.cli
[[ $(wc -l < text50.cli) -eq 50 ]] || fail "tag --pipeline: $(wc -l < text50.cli) lines"
as_array() { echo "[$(paste -sd, "$1")]"; }
as_array text50.cli > text50.expected
"$TAG" --pipeline=bundle4 --format=json < text50.txt > text50.cli4
as_array text50.cli4 > text50.expected4
# Load bodies: one sentence each, so each answer's "line" is 1.
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.dumps({"text": line.rstrip("\n")}))' load.txt > load.bodies
for b in "" 4; do
  "$TAG" --pipeline=bundle$b --format=json < load.txt \
    | sed -e 's/^{"line":[0-9]*,/[{"line":1,/' -e 's/$/]/' > load.expected$b
done
[[ $(wc -l < load.expected) -eq 200 ]] || fail "load.expected: $(wc -l < load.expected) lines"
cmp -s load.expected load.expected4 && fail "the two chunkers answer alike: the reload check could not fail"

# ---- the server ----
# start_server NAME [FLAGS]: serves ./bundle, sets SERVER_PID and URL.
start_server() {
  local name="$1"
  shift
  rm -f "port_$name.txt"
  "$SERVE" --bundle=bundle --port=0 --port_file="port_$name.txt" --threads=2 "$@" \
    2> "serve_$name.log" &
  SERVER_PID=$!
  for _ in $(seq 600); do
    [[ "$(cat "port_$name.txt" 2> /dev/null)" =~ ^[0-9]+$ ]] && break
    kill -0 "$SERVER_PID" 2> /dev/null || fail "serve $name exited: $(cat "serve_$name.log")"
    sleep 0.1
  done
  [[ "$(cat "port_$name.txt" 2> /dev/null)" =~ ^[0-9]+$ ]] || fail "serve $name: no port file"
  URL="http://127.0.0.1:$(cat "port_$name.txt")"
  grep -q "serve: listening on $URL" "serve_$name.log" \
    || fail "serve $name's start line: $(cat "serve_$name.log")"
  cp "serve_$name.log" serve.log
}
# stop_server: SIGTERM, and the server must exit 0.
stop_server() {
  kill -TERM "$SERVER_PID"
  local status=0
  wait "$SERVER_PID" || status=$?
  SERVER_PID=""
  [[ $status -eq 0 ]] || fail "serve exited with status $status on SIGTERM"
}

# request METHOD PATH [CONTENT_TYPE BODY_FILE]: the status; the body in out.json.
request() {
  local args=(-sS -o out.json -w '%{http_code}' -X "$1" --max-time 60)
  if [[ $# -ge 4 ]]; then
    args+=(-H "Content-Type: $3" --data-binary "@$4")
  elif [[ "$1" == POST ]]; then
    args+=(-H "Content-Length: 0")
  fi
  curl "${args[@]}" "$URL$2"
}
# check PYTHON_EXPRESSION: true of the JSON in out.json (as `r`).
check() {
  python3 -c 'import json, sys; r = json.load(open("out.json")); sys.exit(0 if eval(sys.argv[1]) else 1)' \
    "$1" || fail "not $1: $(head -c 600 out.json)"
}
# expect_status STATUS METHOD PATH [CONTENT_TYPE BODY_FILE]: also the error's shape.
expect_status() {
  local want="$1"
  shift
  local got
  got=$(request "$@")
  [[ "$got" == "$want" ]] || fail "$1 $2: HTTP $got, not $want: $(head -c 600 out.json)"
  if [[ "$want" != 200 ]]; then check "r['error']['code'] == $want and r['error']['message']"; fi
}
# metric NAME [LABEL=VALUE...]: the sample's value in metrics.txt (0 if absent).
metric() {
  python3 - "$@" <<'PY'
import re, sys
name, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
total = 0.0
for line in open("metrics.txt"):
    m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)', line)
    if not m or line.startswith("#") or m.group(1) != name:
        continue
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
    if all(labels.get(k) == v for k, v in want.items()):
        total += float(m.group(3))
print(int(total) if total == int(total) else total)
PY
}
scrape() { curl -sS --max-time 60 "$URL/metrics" > metrics.txt || fail "GET /metrics"; }
# answers_right BODY EXPECTED: one request's "sentences" equal byte for byte.
answers_right() {
  "$LOAD" --url="$URL" --mode=load --connections=1 --requests=1 --malformed_fraction=0 \
    --bodies="$1" --expected="$2" > one.json 2> one.err \
    || fail "$1 answered differently from the CLI: $(cat one.err one.json)"
}
still_right() { answers_right text50.body text50.expected; }

start_server main

# ---- healthz, models, metrics ----
expect_status 200 GET /healthz
check 'r == {"status": "ok", "generation": 1}'
expect_status 200 GET /v1/models
check 'r["generation"] == 1 and r["name"] == "small" and r["path"] and r["loadedAt"]'
check '[s["name"] for s in r["stages"]] == ["pos", "chunk"]'
check '[s["column"] for s in r["stages"]] == ["pos", "chunk"]'
check 'r["stages"][1]["inputs"] == ["word", "pos"] and "B-NP" in r["stages"][1]["labels"]'
check '"NN" in r["stages"][0]["labels"] and r["stages"][1]["scheme"] == "iob2"'
check 'r["stages"][0]["chunking"] is False and r["stages"][1]["chunking"] is True'
scrape
tokens_before=$(metric chaintag_tokens_tagged_total)
sentences_before=$(metric chaintag_sentences_tagged_total)
ok_before=$(metric chaintag_http_requests_total path=/v1/tag code=200)
[[ "$(metric chaintag_model_generation)" == 1 ]] || fail "chaintag_model_generation: $(cat metrics.txt)"

# ---- /v1/tag: raw text, byte for byte the CLI's objects ----
expect_status 200 POST /v1/tag application/json text50.body
cli_tokens=$(python3 -c 'import json, sys; print(sum(len(json.loads(l)["tokens"]) for l in open(sys.argv[1])))' text50.cli)
check "r['tokens'] == $cli_tokens and r['model'] == {'name': 'small', 'generation': 1}"
check 'len(r["sentences"]) == 50'
still_right
scrape
[[ $(metric chaintag_tokens_tagged_total) -eq $((tokens_before + 2 * cli_tokens)) ]] \
  || fail "chaintag_tokens_tagged_total: $tokens_before, then $(metric chaintag_tokens_tagged_total) after 2 x $cli_tokens tokens"
[[ $(metric chaintag_sentences_tagged_total) -eq $((sentences_before + 100)) ]] \
  || fail "chaintag_sentences_tagged_total: $sentences_before, then $(metric chaintag_sentences_tagged_total)"
[[ $(metric chaintag_http_requests_total path=/v1/tag code=200) -eq $((ok_before + 2)) ]] \
  || fail "chaintag_http_requests_total{path=/v1/tag,code=200}: $ok_before, then $(metric chaintag_http_requests_total path=/v1/tag code=200)"
[[ $(metric chaintag_http_request_duration_seconds_count) -ge 3 ]] \
  || fail "chaintag_http_request_duration_seconds_count: $(grep duration metrics.txt | head)"

# Pre-tokenised sentences: the same tags and scores, no offsets, line = index + 1.
python3 -c '
import json, sys
print(json.dumps({"sentences": [{"tokens": json.loads(l)["tokens"]} for l in open(sys.argv[1])]}))' \
  text50.cli > tokens50.body
expect_status 200 POST /v1/tag application/json tokens50.body
python3 - text50.cli <<'PY' || fail "pre-tokenised sentences: $(head -c 600 out.json)"
import json, sys
got = json.load(open("out.json"))["sentences"]
want = [json.loads(l) for l in open(sys.argv[1])]
assert len(got) == len(want), len(got)
for i, (g, w) in enumerate(zip(got, want)):
    assert "offsets" not in g and g["line"] == i + 1, g
    del w["offsets"], w["line"], g["line"]
    assert g == w, (i, g, w)
PY

# n-best and margins: the CLI's --nbest=3 --margins objects.
SENTENCE="Rockwell International Corp. said it signed a tentative agreement."
python3 -c 'import json, sys; print(json.dumps({"text": sys.argv[1], "nbest": 3, "margins": True}))' \
  "$SENTENCE" > nbest.body
echo "$SENTENCE" | "$TAG" --pipeline=bundle --format=json --nbest=3 --margins > nbest.cli
as_array nbest.cli > nbest.expected
answers_right nbest.body nbest.expected
expect_status 200 POST /v1/tag application/json nbest.body
check 'len(r["sentences"][0]["stages"][1]["nbest"]) == 3 and "margin" in r["sentences"][0]["stages"][0]'

# ---- errors ----
printf '{"text": "He left.' > bad.json
expect_status 400 POST /v1/tag application/json bad.json
expect_status 415 POST /v1/tag text/plain text50.body
printf '{"text": "caf\xe9 \xff\xfe costs $5."}' > latin1.json
expect_status 400 POST /v1/tag application/json latin1.json
printf '{"nbest": 2}' > nofield.json
expect_status 400 POST /v1/tag application/json nofield.json
printf '{"text": "He left.", "nbest": 0}' > nbest0.json
expect_status 400 POST /v1/tag application/json nbest0.json
expect_status 404 GET /v1/nowhere
expect_status 405 GET /v1/tag
expect_status 405 DELETE /v1/tag
# 200,001 tokens (400 kB, under the body limit) against --max_tokens=200000.
python3 -c 'import json; print(json.dumps({"text": "a " * 200001}))' > many.json
expect_status 413 POST /v1/tag application/json many.json
still_right

# ---- abuse, each followed by a right answer ----
"$LOAD" --url="$URL" --mode=big --big_mb=100 > big.json || fail "100 MB body: $(cat big.json)"
python3 -c 'import json, sys; r = json.load(open("big.json")); sys.exit(0 if r["status"] == 413 and r["cut_early"] else 1)' \
  || fail "100 MB body not refused with 413 and cut early: $(cat big.json)"
still_right
"$LOAD" --url="$URL" --mode=connections --count=10000 > connections.json \
  || fail "10,000 connections: $(cat connections.json)"
still_right
expect_status 200 GET /healthz

# A small body limit and request timeout on a second server.
stop_server
start_server small --max_body_bytes=65536 --request_timeout_seconds=2
head -c 70000 /dev/zero | tr '\0' a | python3 -c 'import json, sys; print(json.dumps({"text": sys.stdin.read()}))' \
  > over.json
expect_status 413 POST /v1/tag application/json over.json
still_right
"$LOAD" --url="$URL" --mode=slow --byte_interval_ms=500 > slow.json \
  || fail "a slow client was not cut: $(cat slow.json)"
python3 -c 'import json, sys; r = json.load(open("slow.json")); sys.exit(0 if 1.5 <= r["seconds"] <= 15 else 1)' \
  || fail "slow client not cut after about 2 s: $(cat slow.json)"
still_right
stop_server

# ---- load, malformed requests mixed in ----
start_server main
"$LOAD" --url="$URL" --mode=load --connections=64 --requests="$LOAD_REQUESTS" \
  --malformed_fraction=0.01 --seed=7 --bodies=load.bodies --expected=load.expected \
  > load.json 2> load.err || fail "load: $(cat load.json; head -20 load.err)"
python3 - "$LOAD_REQUESTS" <<'PY' || fail "load: $(cat load.json)"
import json, sys
r = json.load(open("load.json"))
assert r["requests"] == int(sys.argv[1]) and r["wrong"] == 0 and r["errors"] == 0, r
assert 0 < r["malformed"] == r["malformed_4xx"] and r["ok"] == r["requests"] - r["malformed"], r
assert r["generations"] == {"1": {"answers": r["ok"], "wrong": 0}}, r
PY
still_right

# ---- reloads under load: every answer wholly from one model ----
"$LOAD" --url="$URL" --mode=load --connections=16 --requests=0 --seconds=6 \
  --malformed_fraction=0.01 --bodies=load.bodies --expected=load.expected \
  --expected2=load.expected4 --expected2_from_generation=2 > reload.json 2> reload.err &
load_pid=$!
sleep 2
# A new file in place (a rename), as a deployment would: never the served one rewritten.
cp chunk4.model bundle/chunk.model.new && mv bundle/chunk.model.new bundle/chunk.model
expect_status 200 POST /v1/reload
check 'r == {"generation": 2}'
sleep 1
kill -HUP "$SERVER_PID"
for _ in $(seq 100); do
  [[ "$(curl -sS --max-time 10 "$URL/healthz")" == *'"generation":3'* ]] && break
  sleep 0.1
done
load_status=0
wait "$load_pid" || load_status=$?
[[ $load_status -eq 0 ]] || fail "load during reloads: $(cat reload.json; head -20 reload.err)"
python3 <<'PY' || fail "answers during reloads: $(cat reload.json)"
import json
r = json.load(open("reload.json"))
assert r["wrong"] == 0 and r["errors"] == 0 and r["malformed"] == r["malformed_4xx"], r
g = r["generations"]
assert set(g) <= {"1", "2", "3"} and g["1"]["answers"] > 0, g
assert sum(g[k]["answers"] for k in g if k != "1") > 0, g
PY
expect_status 200 GET /healthz
check 'r == {"status": "ok", "generation": 3}'
answers_right text50.body text50.expected4

# A truncated model: 422, and the model before it keeps answering.
head -c 2000 chunk4.model > bundle/chunk.model.new && mv bundle/chunk.model.new bundle/chunk.model
expect_status 422 POST /v1/reload
expect_status 200 GET /healthz
check 'r == {"status": "ok", "generation": 3}'
answers_right text50.body text50.expected4
scrape
[[ $(metric chaintag_model_reloads_total result=ok) -eq 2 ]] \
  || fail "reloads ok: $(grep reloads metrics.txt)"
[[ $(metric chaintag_model_reloads_total result=failed) -eq 1 ]] \
  || fail "reloads failed: $(grep reloads metrics.txt)"
[[ $(metric chaintag_model_generation) -eq 3 ]] || fail "$(grep generation metrics.txt)"

# ---- SIGTERM under load: exit 0; what was answered was answered right ----
"$LOAD" --url="$URL" --mode=load --connections=16 --requests=0 --seconds=5 --allow_errors \
  --malformed_fraction=0.01 --bodies=load.bodies --expected=load.expected4 \
  > term.json 2> term.err &
load_pid=$!
sleep 2
stop_server
load_status=0
wait "$load_pid" || load_status=$?
[[ $load_status -eq 0 ]] || fail "load during SIGTERM: $(cat term.json; head -20 term.err)"
python3 <<'PY' || fail "answers during SIGTERM: $(cat term.json)"
import json
r = json.load(open("term.json"))
assert r["wrong"] == 0 and r["ok"] > 0, r
assert r["timeouts"] == 0 and r["io_errors"] == 0, r
PY
echo "PASS"
