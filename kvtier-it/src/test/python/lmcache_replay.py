"""Replays LMCache's Redis remote connector against a server, with redis-py's asyncio client.

LMCache (lmcache/v1/storage_backend/connector/redis_connector.py) stores each KV-cache chunk under two keys derived
from CacheEngineKey.to_string() ("<fmt>@<model>@<world size>@<worker id>@<chunk hash>"): "<key>kv_bytes" holds the
tensor bytes and is written first, "<key>metadata" holds a 28-byte RemoteMetadata (seven little-endian int32s:
length, a 4-d shape, dtype, memory format) and is written second, so a reader that finds the metadata finds the
bytes. Lookups are EXISTS on the metadata key; retrieval is GET metadata, then GET kv_bytes.

Three phases, each over all chunks with bounded concurrency on one connection pool:
  1. store: SET kv_bytes, SET metadata, then EXISTS both, GET both and compare;
  2. retrieve: once everything is stored (and much of it, on a small memory tier, demoted to disk), look every
     chunk up and read it back again, as a later request with the same prefix would;
  3. delete: DEL both keys, then EXISTS both and GET metadata must miss.
Prints one JSON summary line; exits 1 on any mismatch or error, 0 otherwise.

    /usr/bin/python3 kvtier-it/src/test/python/lmcache_replay.py --port 6379 --chunks 64 --concurrency 8
"""

import argparse
import asyncio
import hashlib
import json
import random
import struct
import sys
import time

import redis.asyncio as redis

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
DTYPE_BFLOAT16 = 4
FORMAT_KV_2LTD = 1


def chunk_key(seed, index):
    chunk_hash = hashlib.sha256(f"{seed}:{index}".encode()).hexdigest()[:16]
    return f"vllm@{MODEL}@1@0@{chunk_hash}"


def chunk_bytes(seed, index, min_size, max_size):
    rng = random.Random(f"{seed}:{index}")
    return rng.randbytes(rng.randint(min_size, max_size))


def metadata(length):
    blob = struct.pack("<7i", length, 2, 32, 256, 1024, DTYPE_BFLOAT16, FORMAT_KV_2LTD)
    assert len(blob) == 28
    return blob


class Replay:
    def __init__(self, args):
        self.args = args
        self.pool = redis.ConnectionPool.from_url(f"redis://{args.host}:{args.port}",
                                                  max_connections=args.concurrency)
        self.r = redis.Redis(connection_pool=self.pool)
        self.sem = asyncio.Semaphore(args.concurrency)
        self.counts = {"sets": 0, "exists_hits": 0, "gets": 0, "deletes": 0, "misses_after_delete": 0,
                       "kv_bytes_written": 0, "kv_bytes_read": 0, "mismatches": 0}
        self.errors = []

    def fail(self, index, what):
        self.counts["mismatches"] += 1
        if len(self.errors) < 20:
            self.errors.append(f"chunk {index}: {what}")

    def expected(self, index):
        a = self.args
        return chunk_key(a.seed, index), chunk_bytes(a.seed, index, a.min_size, a.max_size)

    async def check(self, index, key, kv):
        hits = await self.r.exists(key + "metadata") + await self.r.exists(key + "kv_bytes")
        self.counts["exists_hits"] += hits
        if hits != 2:
            self.fail(index, f"EXISTS found {hits} of 2 keys")
        meta = await self.r.get(key + "metadata")
        back = await self.r.get(key + "kv_bytes")
        self.counts["gets"] += 2
        self.counts["kv_bytes_read"] += len(back or b"")
        if meta != metadata(len(kv)):
            self.fail(index, f"metadata {meta!r}")
        elif struct.unpack("<7i", meta)[0] != len(back or b""):
            self.fail(index, f"metadata length {struct.unpack('<7i', meta)[0]} but kv_bytes has {len(back or b'')}")
        if back != kv:
            self.fail(index, f"kv_bytes differ: {len(back or b'')} bytes back, {len(kv)} sent")

    async def store(self, index):
        async with self.sem:
            key, kv = self.expected(index)
            await self.r.set(key + "kv_bytes", kv)
            await self.r.set(key + "metadata", metadata(len(kv)))
            self.counts["sets"] += 2
            self.counts["kv_bytes_written"] += len(kv)
            await self.check(index, key, kv)

    async def retrieve(self, index):
        async with self.sem:
            key, kv = self.expected(index)
            await self.check(index, key, kv)

    async def delete(self, index):
        async with self.sem:
            key, _ = self.expected(index)
            deleted = await self.r.delete(key + "kv_bytes", key + "metadata")
            self.counts["deletes"] += deleted
            if deleted != 2:
                self.fail(index, f"DEL removed {deleted} of 2 keys")
            left = await self.r.exists(key + "metadata", key + "kv_bytes")
            meta = await self.r.get(key + "metadata")
            if left == 0 and meta is None:
                self.counts["misses_after_delete"] += 1
            else:
                self.fail(index, f"after DEL: EXISTS {left}, GET metadata {meta!r}")

    async def phase(self, step):
        await asyncio.gather(*(step(i) for i in range(self.args.chunks)))

    async def run(self):
        started = time.monotonic()
        try:
            await self.phase(self.store)
            await self.phase(self.retrieve)
            await self.phase(self.delete)
        except Exception as e:  # reported in the summary; the exit code says it failed
            self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            await self.r.close()
            await self.pool.disconnect()
        return {"chunks": self.args.chunks, "concurrency": self.args.concurrency, **self.counts,
                "seconds": round(time.monotonic() - started, 3), "errors": self.errors}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--chunks", type=int, default=64)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--min-size", type=int, default=256 * 1024)
    p.add_argument("--max-size", type=int, default=4 * 1024 * 1024)
    p.add_argument("--seed", type=int, default=1)
    summary = asyncio.run(Replay(p.parse_args()).run())
    print(json.dumps(summary, sort_keys=True))
    sys.exit(1 if summary["errors"] or summary["mismatches"] else 0)


if __name__ == "__main__":
    main()
