#!/usr/bin/env bash
# The cluster as clients see it, kvtier against Redis Cluster in one run: a three-node kvtier cluster (--replicas 1)
# and a three-master Redis Cluster (redis-server 7, no replicas), each holding the same 300 keys; then, for each,
# bench/cluster-topology.py (reply sizes, redis-py's start-up, a cluster-wide scan, DBSIZE over the primaries) and
# `redis-cli --cluster check`'s key count.
#   bench/cluster-topology.sh [starts]      e.g. bench/cluster-topology.sh 10
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
starts="${1:-10}"
work="$(mktemp -d)"; pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
kv=(17301 17302 17303); rd=(17311 17312 17313)
seeds="127.0.0.1:27301,127.0.0.1:27302,127.0.0.1:27303"
for i in 0 1 2; do
  "$root/kvtier" server --port ${kv[$i]} --cluster-port $((kv[$i] + 10000)) --seeds "$seeds" --node-id n$((i + 1)) \
    --voters n1,n2,n3 --replicas 1 --memory 256m --disk 1g --dir kv$i >kv$i.log 2>&1 &
  pids+=($!)
  mkdir rd$i
  (cd rd$i && exec redis-server --port ${rd[$i]} --cluster-enabled yes --save "" --appendonly no >redis.log 2>&1) &
  pids+=($!)
done
for p in "${kv[@]}" "${rd[@]}"; do
  for _ in $(seq 300); do [ "$(redis-cli -p $p ping 2>/dev/null)" = PONG ] && break; sleep 0.2; done
done
for p in "${kv[@]}"; do # every node in one three-member cluster before any key is written
  for _ in $(seq 300); do
    info="$(redis-cli -p $p cluster info 2>/dev/null || true)"
    grep -q cluster_known_nodes:3 <<<"$info" && grep -q cluster_state:ok <<<"$info" && break; sleep 0.2
  done
done
redis-cli --cluster create 127.0.0.1:${rd[0]} 127.0.0.1:${rd[1]} 127.0.0.1:${rd[2]} --cluster-replicas 0 \
  --cluster-yes >create.log 2>&1
for _ in $(seq 100); do redis-cli -p ${rd[0]} cluster info | grep -q cluster_state:ok && break; sleep 0.2; done
for port in ${kv[0]} ${rd[0]}; do
  for i in $(seq 0 299); do echo "SET scan:$i v$i"; done | redis-cli -c -p $port >/dev/null
done
for target in "kvtier ${kv[0]}" "redis ${rd[0]}"; do
  set -- $target
  echo "$1 $(/usr/bin/python3 "$root/bench/cluster-topology.py" --port $2 --starts "$starts")"
  echo "$1 redis-cli --cluster check: $(redis-cli --cluster check 127.0.0.1:$2 | grep -o '\[OK\] [0-9]* keys in [0-9]* masters.')"
done
