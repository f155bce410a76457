"""Writes N distinct random 1 MiB values to a RESP server, reads them all back, and counts misses and wrong bytes.

    /usr/bin/python3 bench/swap-check.py PORT N
Used in BENCHMARKS.md to compare kvtier (--memory 64m) with redis-server (--maxmemory 64mb, allkeys-lru).
"""
import redis, os, hashlib, sys, time
r = redis.Redis(port=int(sys.argv[1]))
n = int(sys.argv[2]); size = 1 << 20
digests = {}
t = time.time()
for i in range(n):
    v = os.urandom(size)
    r.set(f"swap:{i}", v)
    digests[i] = hashlib.sha256(v).digest()
print("write", n, "MiB in", round(time.time() - t, 2), "s")
t = time.time()
bad = miss = 0
for i in range(n):
    v = r.get(f"swap:{i}")
    if v is None: miss += 1
    elif hashlib.sha256(v).digest() != digests[i]: bad += 1
print("read in", round(time.time() - t, 2), "s", "miss", miss, "bad", bad)
