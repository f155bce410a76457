#!/usr/bin/env bash
# The fleet curves of BENCHMARKS.md ("Fleet"): `kvtier bench fleet` runs, one per set, each into OUT/<set>.
#   l4-tiers        4 x L4, Llama-3.1-8B: no offload, kvtier DRAM, kvtier DRAM + SSD, engines reached directly
#   l4-routing      the same fleet through `kvtier router`: prefix routing without offload, prefix and kvtier-aware
#                   routing with kvtier DRAM + SSD
#   h100-tiers      4 x H100, Llama-3.1-8B, LMCache's 20,000-token histories: as l4-tiers
#   h100-routing    as l4-routing
#   l4-kill-node    the L4 fleet with kvtier DRAM + SSD on one node, prefix routing: the node killed mid-point
#   l4-kill-cluster the same on a three-node cluster with one backup per slot: one node killed mid-point
# Every point starts its kvtier, router and engines afresh. Run nothing else on the machine meanwhile: the engines'
# steps are real-time sleeps, and each point reports how far they ran late (stepLagSeconds in fleet.json).
# Usage: bench/fleet.sh OUT [set ...]   (default: all; about 2 hours on 2 cores)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: bench/fleet.sh OUT [set ...]}"
shift
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(l4-tiers l4-routing h100-tiers h100-routing l4-kill-node l4-kill-cluster)

# 16 users, each with a 1,000-token shared system prompt, 4,000 tokens of its own and 6 rounds of 50 + 100: about
# 88k tokens (11 GiB of KV) in use, against 27k tokens of KV per L4; kvtier's DRAM holds a third of it, its SSD all.
l4=(--gpu l4 --engines 4 --users 16 --rounds 6 --system-prompt 1000 --history 4000 --question 50 --answer 100
    --kvtier-memory 4g --kvtier-disk 64g --kv-bytes-scale 0.125 --warm-up 40s --drain 90s)
# 48 users with LMCache's 20,000-token histories: about 1M tokens (125 GiB of KV) in use, against 448k tokens of KV
# per H100; kvtier's DRAM holds half of it, its SSD all. A thirty-second of each chunk's bytes is moved (1 MiB values).
h100=(--gpu h100 --engines 4 --users 48 --rounds 6 --system-prompt 1000 --history 20000 --question 50 --answer 100
      --kvtier-memory 64g --kvtier-disk 512g --kv-bytes-scale 0.03125 --duration 120s --warm-up 40s --drain 90s)

for set in "${sets[@]}"; do
  case "$set" in
    l4-tiers)        args=("${l4[@]}" --duration 120s --rates 0.5,1,2,3 --offload none,dram,dram+ssd
                           --routing direct) ;;
    l4-routing)      args=("${l4[@]}" --duration 120s --rates 0.5,1,2,3 --offload none,dram+ssd
                           --routing prefix,kvtier) ;;
    h100-tiers)      args=("${h100[@]}" --rates 1,2,4 --offload none,dram,dram+ssd --routing direct) ;;
    h100-routing)    args=("${h100[@]}" --rates 1,2,4 --offload none,dram+ssd --routing prefix,kvtier) ;;
    l4-kill-node)    args=("${l4[@]}" --rates 1 --offload dram+ssd --routing prefix --duration 180s
                           --kill-kvtier-after 90s) ;;
    l4-kill-cluster) args=("${l4[@]}" --rates 1 --offload dram+ssd --routing prefix --duration 180s
                           --kill-kvtier-after 90s --kvtier-nodes 3) ;;
    *) echo "unknown set $set" >&2; exit 2 ;;
  esac
  mkdir -p "$out/$set"
  echo "== $set: kvtier bench fleet ${args[*]}" | tee "$out/$set/command.txt"
  "$root/kvtier" bench fleet "${args[@]}" --out "$out/$set" > "$out/$set/stdout.txt" 2> "$out/$set/stderr.txt" ||
    echo "   $set exited with status $?" >&2
done
