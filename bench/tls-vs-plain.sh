#!/usr/bin/env bash
# Large-value SET/GET over TLS against plain TCP, in the same run: one kvtier node and one redis-server (Debian's,
# built with TLS), each with a plain and a TLS port and the same certificates (made here with openssl: a CA, a server
# and a client certificate, client certificates required). Then, per round, kvtier plain, kvtier TLS, Redis plain,
# Redis TLS with `kvtier bench setget` (kvtier's Java client; --tls for the TLS ports).
#   bench/tls-vs-plain.sh [rounds] [duration]      e.g. bench/tls-vs-plain.sh 2 5s
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-2}"; duration="${2:-5s}"
work="$(mktemp -d)"; trap 'kill $kv_pid $rd_pid 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=bench CA" 2>/dev/null
for n in server client; do
  openssl req -newkey rsa:2048 -nodes -keyout $n.key -out $n.csr -subj "/CN=$n" 2>/dev/null
  openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $n.crt -days 2 2>/dev/null
done
kv=17110; kv_tls=17111; rd=17120; rd_tls=17121
certs=(--tls-cert-file server.crt --tls-key-file server.key --tls-ca-cert-file ca.crt)
"$root/kvtier" server --port $kv --tls-port $kv_tls --dir kvtier --memory 1g --disk 4g "${certs[@]}" >kvtier.log 2>&1 &
kv_pid=$!
redis-server --port $rd --tls-port $rd_tls "${certs[@]}" --save "" --appendonly no --maxmemory 1gb \
  --maxmemory-policy allkeys-lru >redis.log 2>&1 &
rd_pid=$!
for p in $kv $rd; do
  for _ in $(seq 150); do redis-cli -p $p ping >/dev/null 2>&1 && break; sleep 0.2; done
done
grep -o "TLS on port .*" kvtier.log || true
tls=(--tls --cacert ca.crt --cert client.crt --key client.key)
for round in $(seq "$rounds"); do
  for target in "kvtier-plain $kv" "kvtier-tls $kv_tls" "redis-plain $rd" "redis-tls $rd_tls"; do
    set -- $target
    flags=(); [[ $1 == *tls ]] && flags=("${tls[@]}")
    echo "== round $round $1 $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    "$root/kvtier" bench setget --port "$2" "${flags[@]}" -s 1m,4m --key-space 64 -c 4 --duration "$duration" \
      --out "$work/out-$1-$round" 2>&1 | grep -E "^setget +[0-9]"
  done
done
