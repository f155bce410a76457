#!/usr/bin/env bash
# Honest clients' latency under attack (issue 29), kvtier against redis-server in one run: each attack of
# bench/abuse-latency.py, from processes of its own, while a prober process PINGs and SETs every 10 ms.
# kvtier runs through the launcher (heap sized from its flags, --memory 256m --disk 1g); redis-server with its
# defaults and `maxmemory-clients 128mb`. redis-server skips the WATCH attack: its WATCH checks each key against the
# connection's list of watched keys, so 100,000 keys on one connection take minutes of its only thread (quadratic).
#   bench/abuse-latency.sh [out-dir] [attacks]      e.g. bench/abuse-latency.sh /tmp/abuse multi,watch
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-/tmp/kvtier-abuse}"
attacks="${2:-multi,watch,lua,runaway}"
kport=7391
rport=7392
mkdir -p "$out"
rm -rf "$out/kvtier-data"

cleanup() {
  pkill -f -- "--port $kport" 2>/dev/null || true
  redis-cli -p "$rport" shutdown nosave >/dev/null 2>&1 || true
}
trap cleanup EXIT

await() {
  for _ in $(seq 100); do
    redis-cli -p "$1" ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.3
  done
  echo "no PONG from port $1" >&2
  return 1
}

"$root/kvtier" server --port "$kport" --dir "$out/kvtier-data" --memory 256m --disk 1g \
  >"$out/kvtier.log" 2>&1 &
await "$kport"
python3 "$root/bench/abuse-latency.py" --port "$kport" --attacks "$attacks" --label kvtier --json "$out/kvtier.json"
pkill -f -- "--port $kport"

redis-server --port "$rport" --save '' --appendonly no --maxmemory-clients 128mb --daemonize no \
  >"$out/redis.log" 2>&1 &
await "$rport"
redis_attacks="$(echo "$attacks" | tr ',' '\n' | grep -vx watch | paste -sd, -)"
python3 "$root/bench/abuse-latency.py" --port "$rport" --attacks "$redis_attacks" --label redis --json "$out/redis.json"
echo "machine: $(nproc) cores, $(uname -r); $(redis-server --version | cut -d' ' -f3); results in $out"
