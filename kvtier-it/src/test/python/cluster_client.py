#!/usr/bin/python3
"""redis-py's RedisCluster against a kvtier cluster: discovers the nodes from one seed, writes keys spread over
every slot owner with random values of 1 KiB to 1 MiB, reads them back byte for byte, does a cross-slot
mset_nonatomic/mget_nonatomic, deletes everything, and prints one JSON summary line.

Usage: python3 cluster_client.py --port 7000 [--keys 200] [--seed 7]
"""
import argparse
import json
import math
import random

from redis.cluster import RedisCluster


def value_size(rng, i, keys, min_size, max_size):
    """Log-uniform sizes, so both ends of the range occur; the first and last key take the extremes."""
    if i == 0:
        return min_size
    if i == keys - 1:
        return max_size
    return int(math.exp(rng.uniform(math.log(min_size), math.log(max_size))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--min-size", type=int, default=1 << 10)
    parser.add_argument("--max-size", type=int, default=1 << 20)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rc = RedisCluster(host="127.0.0.1", port=args.port, socket_timeout=10, socket_connect_timeout=5)
    summary = {"nodes": len(rc.get_nodes()), "primaries": len(rc.get_primaries()), "mismatches": 0,
               "errors": []}

    values = {}
    for i in range(args.keys):
        key = "py:%d" % i
        values[key] = rng.randbytes(value_size(rng, i, args.keys, args.min_size, args.max_size))
    summary["sets"] = sum(1 for k, v in values.items() if rc.set(k, v) is True)
    summary["bytes_written"] = sum(len(v) for v in values.values())
    summary["key_owners"] = len({rc.get_node_from_key(k).name for k in values})
    read = 0
    for key, value in values.items():
        got = rc.get(key)
        if got != value:
            summary["mismatches"] += 1
            summary["errors"].append("%s: %s bytes, expected %d" % (key, None if got is None else len(got),
                                                                    len(value)))
        else:
            read += len(got)
    summary["bytes_read"] = read

    multi = {"py:m:%d" % i: ("m%d" % i).encode() * (i + 1) for i in range(50)}
    replies = rc.mset_nonatomic(multi)
    summary["mset_ok"] = len(replies) > 0 and all(r is True for r in replies)
    got = rc.mget_nonatomic(list(multi))
    summary["mget_equal"] = got == list(multi.values())
    summary["mget_missing"] = rc.mget_nonatomic(["py:missing:%d" % i for i in range(10)]).count(None)

    all_keys = list(values) + list(multi)
    summary["deleted"] = sum(rc.delete(k) for k in all_keys)
    summary["misses_after_delete"] = sum(1 for k in all_keys if rc.get(k) is None)
    rc.close()
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
