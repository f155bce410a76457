#!/usr/bin/python3
"""Replays LMCache's redis:// and redis-cluster:// remote connectors against a server, call for call.

What it replays (LMCache/LMCache, lmcache/v1/storage_backend/connector/redis_connector.py at the commits named in
docs/lmcache.md; RedisConnector and RedisClusterConnector behave alike):
  * one connector per vLLM worker, each with its own redis.asyncio pool of max_connections=150 and an
    asyncio.Semaphore(150) around every call;
  * keys: CacheEngineKey.to_string() = "<model>@<world size>@<worker id>@<chunk hash hex>@<dtype>", with
    "kv_bytes" and "metadata" appended with no separator;
  * batched_put: asyncio.gather over the chunks; per chunk, under the semaphore, SET <key>kv_bytes <tensor bytes>
    then SET <key>metadata <28-byte RemoteMetadata> (kv_bytes first, so a reader that finds metadata finds bytes);
  * batched_async_contains: EXISTS <key>metadata for each key in prefix order, one at a time, stopping at the first
    miss; the answer is the length of the stored prefix;
  * batched_get_non_blocking: asyncio.gather over the chunks; per chunk GET <key>metadata (nil: a miss), then
    GET <key>kv_bytes; if kv_bytes is nil the connector DELs <key>metadata and reports a miss.
RemoteMetadata is struct "iiiiiii" (native = little-endian int32): length, memory format, dtype code, shape[0..3]
(lmcache/v1/protocol.py).

Scenario: three connectors at once, as two vLLM engines would open them: engine A (Llama-3.1-8B, TP 1: 32 MiB
chunks of 256 tokens, plus one unfull chunk of 100 tokens) and engine B (TP 2: workers 0 and 1, 16 MiB chunks).
All store concurrently, then look up (a longer prefix than stored, and one that misses at once), read everything
back and compare it byte for byte, then lose one chunk's kv_bytes (as when the server evicts it) and check the
connector's cleanup path. Prints one JSON summary line; exits 1 on any mismatch or error.

    /usr/bin/python3 lmcache_connector_replay.py --mode redis --port 6379 [--password PASS]
    /usr/bin/python3 lmcache_connector_replay.py --mode redis-cluster --port 7001 --port 7002 --port 7003
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
from redis.asyncio.cluster import ClusterNode, RedisCluster

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
LAYERS, KV_HIDDEN, BF16_BYTES, CHUNK_TOKENS = 32, 8 * 128, 2, 256
MAX_CONNECTIONS = 150  # RedisConnector.max_connections, also its semaphore
FMT_KV_2LTD, DTYPE_BFLOAT16 = 1, 3  # MemoryFormat.KV_2LTD, protocol.DTYPE_TO_INT[torch.bfloat16]
METHODS = {"SET": "set", "GET": "get", "EXISTS": "exists", "DEL": "delete"}


def chunk_hash(seed, engine, worker, index):
    digest = hashlib.sha256(f"{seed}:{engine}:{worker}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def engine_key(world_size, worker, h):
    return f"{MODEL}@{world_size}@{worker}@{h:x}@bfloat16"  # CacheEngineKey.to_string(), no tags


def metadata(length, tokens, world_size):
    shape = (2, LAYERS, tokens, KV_HIDDEN // world_size)  # KV_2LTD: [K/V, layers, tokens, hidden]
    return struct.pack("iiiiiii", length, FMT_KV_2LTD, DTYPE_BFLOAT16, *shape)


class Chunk:
    def __init__(self, seed, engine, world_size, worker, index, tokens):
        self.key = engine_key(world_size, worker, chunk_hash(seed, engine, worker, index))
        self.tokens = tokens
        size = 2 * LAYERS * tokens * (KV_HIDDEN // world_size) * BF16_BYTES
        self.kv = random.Random(self.key).randbytes(size)
        self.meta = metadata(size, tokens, world_size)


class Connector:
    """The call sequences of RedisConnector/RedisClusterConnector, with counters of what went over the wire."""

    def __init__(self, client, pools):
        self.r = client
        self.pools = pools
        self.sem = asyncio.Semaphore(MAX_CONNECTIONS)
        self.calls = {"SET": 0, "GET": 0, "EXISTS": 0, "DEL": 0}
        self.in_flight = 0
        self.max_in_flight = 0

    async def call(self, name, *args):
        self.calls[name] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await getattr(self.r, METHODS[name])(*args)
        finally:
            self.in_flight -= 1

    async def put(self, chunk):
        async with self.sem:
            ok_kv = await self.call("SET", chunk.key + "kv_bytes", chunk.kv)
            ok_meta = await self.call("SET", chunk.key + "metadata", chunk.meta)
        return ok_kv is True and ok_meta is True

    async def batched_put(self, chunks):
        return await asyncio.gather(*(self.put(c) for c in chunks))

    async def batched_async_contains(self, keys):
        hits = 0
        for key in keys:
            async with self.sem:
                if not await self.call("EXISTS", key + "metadata"):
                    return hits
            hits += 1
        return hits

    async def get(self, key):
        async with self.sem:
            meta = await self.call("GET", key + "metadata")
            if meta is None:
                return None
            length = struct.unpack_from("iiiiiii", meta)[0]
            kv = await self.call("GET", key + "kv_bytes")
        if kv is None:
            async with self.sem:
                await self.call("DEL", key + "metadata")
            return None
        return meta, kv[:length]

    async def batched_get_non_blocking(self, keys):
        return await asyncio.gather(*(self.get(k) for k in keys))

    def connections_opened(self):
        return sum(p() for p in self.pools)

    async def close(self):
        await self.r.close()


async def connector(args):
    if args.mode == "redis":
        auth = f":{args.password}@" if args.password else ""  # the URL form LMCache passes to from_url as it is
        pool = redis.ConnectionPool.from_url(f"redis://{auth}127.0.0.1:{args.port[0]}",
                                             max_connections=MAX_CONNECTIONS)
        return Connector(redis.Redis(connection_pool=pool), [lambda: pool._created_connections])
    cluster = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in args.port],
                           password=args.password or None, max_connections=MAX_CONNECTIONS,
                           decode_responses=False)
    await cluster.initialize()
    return Connector(cluster, [lambda n=n: len(n._connections) for n in cluster.get_nodes()])


class Replay:
    def __init__(self, args):
        self.args = args
        self.summary = {"mode": args.mode, "mismatches": 0, "errors": []}

    def fail(self, what):
        self.summary["mismatches"] += 1
        if len(self.summary["errors"]) < 20:
            self.summary["errors"].append(what)

    def workload(self):
        a = self.args
        engine_a = [Chunk(a.seed, "A", 1, 0, i, CHUNK_TOKENS) for i in range(a.chunks)]
        engine_a.append(Chunk(a.seed, "A", 1, 0, a.chunks, a.unfull_tokens))
        engine_b = [[Chunk(a.seed, "B", 2, w, i, CHUNK_TOKENS) for i in range(a.tp2_chunks)] for w in (0, 1)]
        return [engine_a] + engine_b

    async def run(self):
        started = time.monotonic()
        workers = self.workload()
        connectors = [await connector(self.args) for _ in workers]
        s = self.summary
        try:
            s["chunk_bytes"] = sorted({len(c.kv) for w in workers for c in w})
            s["key_example"] = workers[0][0].key
            # 1. every worker stores its chunks at once, as three vLLM workers would
            stored = await asyncio.gather(*(conn.batched_put(w) for conn, w in zip(connectors, workers)))
            s["puts_ok"] = sum(sum(r) for r in stored)
            s["bytes_written"] = sum(len(c.kv) for w in workers for c in w)
            # 2. prefix lookups: the stored prefix plus two chunks nobody stored, and a prefix that misses at once
            unknown = [engine_key(1, 0, chunk_hash(self.args.seed, "never", 0, i)) for i in range(2)]
            s["prefix_hits"] = [await conn.batched_async_contains([c.key for c in w] + unknown)
                                for conn, w in zip(connectors, workers)]
            s["miss_first_hits"] = await connectors[0].batched_async_contains(unknown + [workers[0][0].key])
            # 3. retrieval of every chunk, compared byte for byte
            read = 0
            for conn, w in zip(connectors, workers):
                for chunk, got in zip(w, await conn.batched_get_non_blocking([c.key for c in w])):
                    if got is None:
                        self.fail(f"{chunk.key}: missing on retrieval")
                    elif got[0] != chunk.meta or got[1] != chunk.kv:
                        self.fail(f"{chunk.key}: {len(got[1])} bytes back, {len(chunk.kv)} stored, metadata "
                                  f"{'equal' if got[0] == chunk.meta else 'differs'}")
                    else:
                        read += len(got[1])
            s["bytes_read"] = read
            await self.lose_kv_bytes(connectors[0], workers[0])
        except Exception as e:  # reported in the summary; the exit code says it failed
            s["errors"].append(f"{type(e).__name__}: {e}")
        finally:
            s["calls"] = {k: sum(c.calls[k] for c in connectors) for k in ("SET", "GET", "EXISTS", "DEL")}
            s["max_in_flight"] = max(c.max_in_flight for c in connectors)
            s["connections_opened"] = [c.connections_opened() for c in connectors]
            for c in connectors:
                await c.close()
        s["seconds"] = round(time.monotonic() - started, 3)
        return s

    async def lose_kv_bytes(self, conn, chunks):
        """kv_bytes gone but metadata present: the connector's GET must miss and DEL the orphaned metadata."""
        s = self.summary
        victim = chunks[len(chunks) // 2]
        s["evicted_kv_bytes_deleted"] = await conn.r.delete(victim.key + "kv_bytes")
        s["orphan_get"] = "miss" if await conn.get(victim.key) is None else "hit"
        s["orphan_metadata_left"] = await conn.r.exists(victim.key + "metadata")
        s["prefix_after_loss"] = await conn.batched_async_contains([c.key for c in chunks])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=("redis", "redis-cluster"), required=True)
    p.add_argument("--port", type=int, action="append", required=True, help="repeat for cluster startup nodes")
    p.add_argument("--chunks", type=int, default=4, help="full 256-token chunks of the TP 1 engine")
    p.add_argument("--unfull-tokens", type=int, default=100, help="tokens in the TP 1 engine's last chunk")
    p.add_argument("--tp2-chunks", type=int, default=3, help="full chunks per worker of the TP 2 engine")
    p.add_argument("--password", default="", help="as in redis://:PASSWORD@host:port")
    p.add_argument("--seed", type=int, default=1)
    summary = asyncio.run(Replay(p.parse_args()).run())
    print(json.dumps(summary, sort_keys=True))
    sys.exit(1 if summary["errors"] or summary["mismatches"] else 0)


if __name__ == "__main__":
    main()
