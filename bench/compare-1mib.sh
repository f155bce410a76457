#!/usr/bin/env bash
# SET/GET throughput of kvtier vs Redis (Debian redis-server) with 1 MiB values, measured in the same run with the
# same client (redis-benchmark), alternating kvtier and Redis twice to average out machine noise.
#   bench/compare-1mib.sh [requests-per-test] [rounds]
# Both servers get the same 4 GiB memory cap, so the 1 GiB working set stays in memory for both.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n="${1:-2000}"; rounds="${2:-2}"
work="$(mktemp -d)"; trap 'kill $kv_pid $rd_pid 2>/dev/null || true; rm -rf "$work"' EXIT
kv_port=17100; rd_port=17101
"$root/kvtier" server --port $kv_port --memory 4g --disk 16g --dir "$work/kvtier" >"$work/kvtier.log" 2>&1 & kv_pid=$!
redis-server --port $rd_port --save "" --appendonly no --maxmemory 4gb --dir "$work" >"$work/redis.log" 2>&1 & rd_pid=$!
for p in $kv_port $rd_port; do
  for _ in $(seq 100); do redis-cli -p $p ping >/dev/null 2>&1 && break; sleep 0.2; done
done
rps() { # port test clients
  redis-benchmark -p "$1" -t "$2" -n "$n" -d 1048576 -c "$3" -r 1000 -q 2>/dev/null | tr '\r' '\n' \
    | sed -n "s/^$(echo "$2" | tr a-z A-Z): \([0-9.]*\) requests per second.*/\1/p" | tail -1
}
# Warm-up, identical for both: fills the 1000 keys and lets the JVM compile the hot path before anything is timed.
for p in $kv_port $rd_port; do
  for t in set get; do rps "$p" "$t" 4 >/dev/null; done
done
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(redis-server --version | cut -d' ' -f3); date: $(date -u +%F)"
printf "%-4s %-8s %14s %14s %8s\n" test clients "kvtier MB/s" "redis MB/s" ratio
for c in 4 16; do
  for t in set get; do
    kv=0; rd=0
    for _ in $(seq "$rounds"); do
      kv=$(awk -v a="$kv" -v b="$(rps $kv_port $t $c)" 'BEGIN{print a+b}')
      rd=$(awk -v a="$rd" -v b="$(rps $rd_port $t $c)" 'BEGIN{print a+b}')
    done
    awk -v t="$t" -v c="$c" -v kv="$kv" -v rd="$rd" -v r="$rounds" \
      'BEGIN{printf "%-4s %-8s %14.0f %14.0f %8.2f\n", t, c, kv/r*1.048576, rd/r*1.048576, kv/rd}'
  done
done
