#!/usr/bin/env bash
# Event-loop scaling (issue 16, item 3): redis-benchmark (one thread, pinned to CPU 0) against kvtier with
# --io-threads 1..N and against redis-server, each server pinned with taskset to the CPUs it is given. On a machine of
# C CPUs: the client keeps CPU 0, a server gets CPUs 1..k. Requires taskset, redis-server and redis-benchmark on PATH.
#   bench/io-threads.sh [requests] [max-io-threads]      e.g. bench/io-threads.sh 1000000 2
# Prints one CSV line per pass: server,io_threads,cpus,command,pipeline,requests_per_second,p50_ms.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
requests="${1:-1000000}"
cpus="$(nproc)"
max="${2:-$(( cpus > 1 ? cpus - 1 : 1 ))}"
port=7411
dir="$(mktemp -d)"
trap 'pkill -f "server --port $port" >/dev/null 2>&1 || true; redis-cli -p $port shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT

up() {
  for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "server on port $port did not answer" >&2; exit 1
}

# server label, io threads, the CPU list it is pinned to
passes() {
  local label=$1 threads=$2 set=$3
  redis-benchmark -p $port -t set -d 100 -r 100000 -n 300000 -c 50 -P 16 -q >/dev/null 2>&1 # fill and warm up
  for pipeline in 1 16; do
    for t in set get; do
      local n=$(( pipeline == 1 ? requests / 5 : requests ))
      local line
      line=$(taskset -c 0 redis-benchmark -p $port -t $t -d 100 -r 100000 -n $n -c 50 -P $pipeline --csv 2>/dev/null \
        | tail -1)
      IFS=, read -r _ rps _ _ p50 _ <<<"$(tr -d '"' <<<"$line")"
      echo "$label,$threads,$set,$t,$pipeline,$rps,$p50"
    done
  done
}

echo "server,io_threads,cpus,command,pipeline,requests_per_second,p50_ms"
for threads in $(seq 1 "$max"); do
  set="1-$threads"; [[ $threads -eq 1 ]] && set=1
  [[ $cpus -le $threads ]] && set="0-$(( cpus - 1 ))" # fewer CPUs than loops plus client: the server shares CPU 0
  rm -rf "$dir/kvtier"
  taskset -c "$set" "$root/kvtier" server --port $port --dir "$dir/kvtier" --memory 1g --disk 2g \
    --io-threads "$threads" > "$dir/kvtier.log" 2>&1 &
  up
  passes kvtier "$threads" "$set"
  pkill -f "server --port $port"; wait || true
done
taskset -c 1 redis-server --port $port --save "" --appendonly no --maxmemory 1gb --daemonize no > "$dir/redis.log" 2>&1 &
up
passes redis 1 1
redis-cli -p $port shutdown nosave >/dev/null 2>&1 || true
wait || true
