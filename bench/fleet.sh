#!/usr/bin/env bash
# The fleet curves of BENCHMARKS.md ("Fleet"): `kvtier bench fleet` runs, one per set, each into OUT/<set>.
# Chats (decode-heavy): 16 users, a 1,000-token shared system prompt, 4,000 tokens of their own, 6 rounds of a 50-token
# question and a 100-token answer, on 4 x L4 (Llama-3.1-8B): about 88k tokens (11 GiB of KV) in use against 27k tokens
# of KV per L4; kvtier's DRAM holds a third of it, its SSD all.
#   l4-tiers        no offload, kvtier DRAM, kvtier DRAM + SSD; engines reached directly
#   l4-routing      through `kvtier router`: prefix routing without offload, prefix and kvtier-aware routing with
#                   kvtier DRAM + SSD
# Long contexts (prefill-heavy): 16 users with 8,000 tokens of their own, 4 rounds of a 100-token question and a
# 20-token answer: about 150k tokens (19 GiB of KV) in use.
#   l4-long-dram    no offload, and kvtier DRAM holding all of it (24 GiB); engines reached directly
#   l4-long-ssd     kvtier DRAM holding a quarter of it (6 GiB) and SSD the rest
#   l4-long-dram64  a diagnostic point: DRAM that never fills (64 GiB), at 1 request/s
#   l4-kill-node    kvtier DRAM holding all of it on one node, at 1 request/s: the node killed mid-point
#   l4-kill-cluster the same on a three-node cluster with one backup per slot: one node killed mid-point
#   h100-long-dram  4 x H100, 48 users of LMCache's 20,000-token histories (1M tokens, 126 GiB of KV, against 448k
#                   tokens per H100): no offload, and kvtier DRAM holding all of it; engines reached directly
#   h100-long-prefix the same without offload through prefix routing
#   h100-long-shm   kvtier DRAM at 4 requests/s, the engines loading over TCP and through the node's shared memory
#   h100-sync, h100-async, h100-layerwise
#                   the same at 4 requests/s in shorter points, 320 GiB of DRAM: no offload, kvtier DRAM (one node),
#                   and the baselines (vLLM's native CPU offloading, LMCache's local CPU tier: 80 GiB per engine)
#                   per load mode; h100-prefix-async the same with prefix routing, loading asynchronously
# The seed's question (issue 32): requests/s per GPU against tokens/s per user, with no offload, kvtier DRAM and kvtier
# DRAM + SSD, the engines loading asynchronously (as vLLM's OffloadingConnector and LMCache's multiprocess mode do):
#   seed-l4         the chats on 4 x L4 at 0.5, 1 and 2 requests/s (4 GiB of DRAM, 64 GiB of SSD), direct routing
#   seed-h100       the H100 workload above at 4 and 8 requests/s, DRAM holding half of it (64 GiB), SSD the rest
#   seed-h200       the same on 4 x H200 (143 GiB each: 822k tokens of KV per GPU)
#   seed-l4-kvtier, seed-h100-kvtier, seed-h200-kvtier: DRAM + SSD through kvtier-aware routing, at the middle rate
#   anchors-l4      the chats at 1 request/s through prefix, llmd (llm-d's scorers), dynamo (Dynamo's cost) and
#                   kvtier routing, without offload and with kvtier DRAM + SSD (issue 33)
#   anchors-l4-2rps the three load-aware policies with DRAM + SSD at 2 requests/s in 120 s points
#   tenants-l4      our own workload: 8 tenants with system prompts of 3,000 tokens of their own, users drawn by
#                   Zipf weights (the hottest has 37% of users), 24 users of 1,000 tokens each, 4 rounds: prefix,
#                   llmd, dynamo and kvtier routing with DRAM + SSD at 2 requests/s, each point's reuse ceiling
#                   computed offline from the prompts it sent
# Every point starts its kvtier, router and engines afresh. Run nothing else on the machine meanwhile: the engines'
# steps are real-time sleeps, and each point reports how far they ran late (stepLagSeconds in fleet.json).
# Usage: bench/fleet.sh OUT [set ...]   (default: all; about 2.5 hours on 2 cores)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: bench/fleet.sh OUT [set ...]}"
shift
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(l4-tiers l4-routing l4-long-dram l4-long-ssd l4-long-dram64 l4-kill-node l4-kill-cluster
                               h100-long-dram h100-long-prefix)

l4=(--gpu l4 --engines 4 --users 16 --rounds 6 --system-prompt 1000 --history 4000 --question 50 --answer 100
    --kvtier-memory 4g --kvtier-disk 64g --kv-bytes-scale 0.125 --warm-up 40s --drain 90s)
long=(--gpu l4 --engines 4 --users 16 --rounds 4 --system-prompt 1000 --history 8000 --question 100 --answer 20
      --kv-bytes-scale 0.125 --warm-up 40s --drain 90s --routing direct)
# A thirty-second of each chunk's bytes is moved (1 MiB values).
h100=(--gpu h100 --engines 4 --users 48 --rounds 6 --system-prompt 1000 --history 20000 --question 50 --answer 20
      --kvtier-memory 160g --kv-bytes-scale 0.03125 --duration 120s --warm-up 40s --drain 90s)
# The same workload in shorter points (issue 32's load modes and baselines: eight points).
# 320 GiB of DRAM in all: kvtier's one node, or 80 GiB of each engine's own (the baselines; more than the 56 GiB of KV
# an H100 holds, so that a CPU tier can add to it).
h100q=(--gpu h100 --engines 4 --users 48 --rounds 6 --system-prompt 1000 --history 20000 --question 50 --answer 20
       --kvtier-memory 320g --kv-bytes-scale 0.03125 --duration 60s --warm-up 30s --drain 60s --rates 4)

# Shorter points for the seed's question: the engines load asynchronously.
seedl4=(--gpu l4 --engines 4 --users 16 --rounds 6 --system-prompt 1000 --history 4000 --question 50 --answer 100
        --kvtier-memory 4g --kvtier-disk 64g --kv-bytes-scale 0.125 --duration 60s --warm-up 30s --drain 60s
        --load-mode async)
seedh=(--engines 4 --users 48 --rounds 6 --system-prompt 1000 --history 20000 --question 50 --answer 20
       --kvtier-memory 64g --kvtier-disk 256g --kv-bytes-scale 0.03125 --duration 60s --warm-up 30s --drain 60s
       --load-mode async)

# The anchors' policies (issue 33): llm-d's scorers and Dynamo's cost against prefix and kvtier routing, with and
# without the shared pool (kvtier DRAM + SSD), the chats on 4 x L4 at 1 request/s, in short points.
anchors=(--gpu l4 --engines 4 --users 16 --rounds 6 --system-prompt 1000 --history 4000 --question 50 --answer 100
         --kvtier-memory 4g --kvtier-disk 64g --kv-bytes-scale 0.125 --duration 40s --warm-up 20s --drain 40s
         --load-mode async)

for set in "${sets[@]}"; do
  case "$set" in
    l4-tiers)        args=("${l4[@]}" --duration 120s --rates 0.5,1,2,3 --offload none,dram,dram+ssd
                           --routing direct) ;;
    l4-routing)      args=("${l4[@]}" --duration 120s --rates 0.5,1,2,3 --offload none,dram+ssd
                           --routing prefix,kvtier) ;;
    l4-long-dram)    args=("${long[@]}" --duration 120s --rates 0.5,1,2,3 --offload none,dram --kvtier-memory 24g) ;;
    l4-long-ssd)     args=("${long[@]}" --duration 120s --rates 0.5,1,2,3 --offload dram+ssd --kvtier-memory 6g
                           --kvtier-disk 64g) ;;
    h100-long-dram)  args=("${h100[@]}" --rates 2,4,8 --offload none,dram --routing direct) ;;
    h100-long-prefix) args=("${h100[@]}" --rates 2,4,8 --offload none --routing prefix) ;;
    h100-long-shm)   args=("${h100[@]}" --rates 4 --offload dram,dram-shm --routing direct) ;;
    h100-sync)       args=("${h100q[@]}" --offload none,dram,vllm-cpu,lmcache-cpu --load-mode sync) ;;
    h100-async)      args=("${h100q[@]}" --offload dram,lmcache-cpu --load-mode async) ;;
    h100-layerwise)  args=("${h100q[@]}" --offload dram,lmcache-cpu --load-mode layerwise) ;;
    h100-prefix-async) args=("${h100q[@]}" --offload none,vllm-cpu,dram --routing prefix --load-mode async) ;;
    seed-l4)         args=("${seedl4[@]}" --rates 0.5,1,2 --offload none,dram,dram+ssd --routing direct) ;;
    seed-h100)       args=(--gpu h100 "${seedh[@]}" --rates 4,8 --offload none,dram,dram+ssd --routing direct) ;;
    seed-h200)       args=(--gpu h200 "${seedh[@]}" --rates 4,8 --offload none,dram,dram+ssd --routing direct) ;;
    seed-l4-kvtier)  args=("${seedl4[@]}" --rates 1 --offload dram+ssd --routing kvtier) ;;
    seed-h100-kvtier) args=(--gpu h100 "${seedh[@]}" --rates 4 --offload dram+ssd --routing kvtier) ;;
    seed-h200-kvtier) args=(--gpu h200 "${seedh[@]}" --rates 4 --offload dram+ssd --routing kvtier) ;;
    anchors-l4)      args=("${anchors[@]}" --rates 1 --offload none,dram+ssd --routing prefix,llmd,dynamo,kvtier) ;;
    anchors-l4-2rps) args=("${l4[@]}" --load-mode async --duration 120s --rates 2 --offload dram+ssd
                           --routing llmd,dynamo,kvtier) ;;
    tenants-l4)      args=(--gpu l4 --engines 4 --users 24 --rounds 4 --system-prompts 8 --tenant-skew 1
                           --system-prompt 3000 --history 1000 --question 50 --answer 100 --kvtier-memory 4g
                           --kvtier-disk 64g --kv-bytes-scale 0.125 --warm-up 40s --drain 90s --load-mode async
                           --duration 120s --rates 2 --offload dram+ssd --routing prefix,llmd,dynamo,kvtier) ;;
    l4-long-dram64)  args=("${long[@]}" --duration 120s --rates 1 --offload dram --kvtier-memory 64g) ;;
    l4-kill-node)    args=("${long[@]}" --duration 180s --rates 1 --offload dram --kvtier-memory 24g
                           --kill-kvtier-after 90s) ;;
    l4-kill-cluster) args=("${long[@]}" --duration 180s --rates 1 --offload dram --kvtier-memory 24g
                           --kill-kvtier-after 90s --kvtier-nodes 3) ;;
    *) echo "unknown set $set" >&2; exit 2 ;;
  esac
  # A calibration measured on the set's GPU (bench/gpu-calibrate.py), where one is committed, calibrates its roofline.
  for ((i = 0; i < ${#args[@]} - 1; i++)); do
    if [ "${args[$i]}" = --gpu ] && [ -f "$root/docs/benchmarks/gpu-calibration-${args[$((i + 1))]}.json" ]; then
      args+=(--gpu-calibration "$root/docs/benchmarks/gpu-calibration-${args[$((i + 1))]}.json")
    fi
  done
  mkdir -p "$out/$set"
  echo "== $set: kvtier bench fleet ${args[*]}" | tee "$out/$set/command.txt"
  "$root/kvtier" bench fleet "${args[@]}" --out "$out/$set" > "$out/$set/stdout.txt" 2> "$out/$set/stderr.txt" ||
    echo "   $set exited with status $?" >&2
done
