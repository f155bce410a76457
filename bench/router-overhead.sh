#!/usr/bin/env bash
# What `kvtier router` adds to a request: wrk against one `kvtier engine-sim` directly and through the router
# (policy prefix, with the engine's KV events followed), one after the other, 1 and 16 connections. The engine answers
# at once (no prefill or decode time), so the difference is the router. Then the same for a chat request with a model
# directory (the test BPE tokenizer and a ChatML-shaped Jinja template, which engine and router both render and
# tokenize). Needs wrk (apt-get install wrk).
# Usage: bench/router-overhead.sh [seconds per run, default 10]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
secs="${1:-10}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
cat > "$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body   = '{"model":"sim-model","max_tokens":1,"prompt":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32]}'
wrk.headers["Content-Type"] = "application/json"
LUA
cat > "$work/chat.lua" <<'LUA'
wrk.method = "POST"
wrk.body   = '{"model":"sim-model","max_tokens":1,"messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly and cite your sources."},{"role":"user","content":"Where is the KV cache of my prompt prefix?"},{"role":"assistant","content":"In kvtier."},{"role":"user","content":"Which tier?"}]}'
wrk.headers["Content-Type"] = "application/json"
LUA
mkdir "$work/model"
cp "$root/kvtier-router/src/test/resources/tokenizer/tokenizer.json" "$work/model/"
cp "$root/kvtier-router/src/test/resources/chat/im-style.jinja" "$work/model/chat_template.jinja"
KVTIER_HEAP=-Xmx512m "$root/kvtier" engine-sim --port 19001 --events-port 19501 --replay-port 19502 \
  --prefill-us 0 --decode-us 0 --max-seqs 256 > "$work/sim.log" 2>&1 &
KVTIER_HEAP=-Xmx512m "$root/kvtier" router --port 19080 --policy prefix \
  --engine http://127.0.0.1:19001,events=tcp://127.0.0.1:19501,replay=tcp://127.0.0.1:19502 > "$work/router.log" 2>&1 &
KVTIER_HEAP=-Xmx512m "$root/kvtier" engine-sim --port 19002 --events-port 19503 --replay-port 19504 \
  --prefill-us 0 --decode-us 0 --max-seqs 256 --tokenizer "$work/model" > "$work/sim-chat.log" 2>&1 &
KVTIER_HEAP=-Xmx512m "$root/kvtier" router --port 19081 --policy prefix --tokenizer "$work/model" \
  --engine http://127.0.0.1:19002,events=tcp://127.0.0.1:19503,replay=tcp://127.0.0.1:19504 > "$work/router-chat.log" 2>&1 &
for port in 19080 19081; do
  for i in $(seq 1 100); do curl -sf "localhost:$port/health" > /dev/null && break; sleep 0.2; done
done
printf '%-12s %5s %10s %10s %10s\n' path conns req/s p50 p99
for run in "completions post direct:19001 router:19080" "chat/completions chat chat-direct:19002 chat-router:19081"; do
  read -r path script a b <<< "$run"
  for c in 1 16; do
    for target in "$a" "$b"; do
      port="${target#*:}"
      url="http://127.0.0.1:$port/v1/$path"
      wrk -t1 -c"$c" -d3s -s "$work/$script.lua" "$url" > /dev/null   # warm-up
      out="$(wrk -t1 -c"$c" -d"${secs}s" --latency -s "$work/$script.lua" "$url")"
      printf '%-12s %5s %10s %10s %10s\n' "${target%:*}" "$c" "$(awk '/Requests\/sec/ {print $2}' <<< "$out")" \
        "$(awk '$1 == "50%" {print $2}' <<< "$out")" "$(awk '$1 == "99%" {print $2}' <<< "$out")"
    done
  done
done
