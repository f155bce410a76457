#!/usr/bin/env bash
# Per-command cost against Redis (issue 16): redis-benchmark's own small-value commands (SET, GET, EXISTS, and MGET
# and MSET of 10 keys; 100 B and 4 KiB values; 50 connections; -P 1 and -P 16) on kvtier and on redis-server, A B A B
# in one run, through `kvtier bench compare --workloads small`. With a second launcher (the `kvtier` script of another
# checkout, built with `./mvnw package -DskipTests`), the same run follows against that build: an A/B of a change.
#   bench/small-values.sh [out-dir] [other-launcher]      e.g. bench/small-values.sh /tmp/small /tmp/base/kvtier
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-/tmp/kvtier-small}"
other="${2:-}"
run() {
  "$root/kvtier" bench compare --workloads small --small-sizes 100,4k --small-requests 100000 --rounds 2 \
    --server-warmup 6s --skip-limits --memory 1g --disk 2g --kvtier-launcher "$1" --out "$2"
}
run "$root/kvtier" "$out/this"
if [[ -n "$other" ]]; then
  run "$other" "$out/other"
fi
