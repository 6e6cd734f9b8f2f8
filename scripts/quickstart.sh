#!/usr/bin/env bash
# The main job on a fresh machine: set up and build, start `superfluid serve` on the default
# model (pulled from the Hugging Face hub once; offline, the embedded test model), send one chat
# request, print the answer, stop the server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

PORT="${PORT:-8453}"
LOG="$(mktemp -t superfluid-quickstart.XXXXXX.log)"
build/bin/superfluid serve --port "$PORT" >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true' EXIT

echo "[quickstart] starting superfluid on http://127.0.0.1:$PORT (log: $LOG)"
# No fixed deadline: the first run may be downloading the default model (progress in the log).
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do
  kill -0 $SERVER 2>/dev/null || { cat "$LOG"; exit 1; }
  sleep 0.5
done

REQUEST='{"model":"default","messages":[{"role":"user","content":"Hello! Who are you?"}],"max_tokens":48}'
echo "[quickstart] POST /v1/chat/completions $REQUEST"
RESPONSE="$(curl -sf "http://127.0.0.1:$PORT/v1/chat/completions" -H 'content-type: application/json' -d "$REQUEST")"
echo "[quickstart] answer:"
echo "$RESPONSE" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);console.log("  "+r.choices[0].message.content.replace(/\n/g,"\n  "));console.log(`  (${r.usage.prompt_tokens} prompt + ${r.usage.completion_tokens} completion tokens, finish_reason ${r.choices[0].finish_reason})`)})'
echo
if grep -q "embedded test model" "$LOG"; then
  echo "[quickstart] the hub was not reachable: the embedded test model has random weights, its answers are random text."
fi
echo "[quickstart] to keep a server running:  build/bin/superfluid serve            (or: build/bin/superfluid serve MODEL.gguf)"
echo "[quickstart] then point any OpenAI client at http://127.0.0.1:8453/v1"
