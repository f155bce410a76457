#!/usr/bin/python3
"""What cluster clients see of one cluster: the sizes of CLUSTER SLOTS, NODES and SHARDS as sent (bytes, ranges),
redis-py RedisCluster's start-up time (median of --starts), the primaries it finds, a cluster-wide scan_iter
(keys returned, distinct), DBSIZE summed over the primaries, and whether cluster_info() parses. Prints one JSON line.

Usage: cluster-topology.py --port 7000 [--starts 10] [--match 'scan:*']
"""
import argparse
import json
import socket
import statistics
import time

from redis.cluster import RedisCluster


def raw_reply_bytes(port, *args):
    """The bytes of one reply, read until the RESP parser says it is complete."""
    cmd = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(cmd)
        buf = b""
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
            if complete(buf):
                return buf


def complete(buf):
    """Whether buf holds one whole RESP2 reply."""
    def skip(i):
        end = buf.find(b"\r\n", i)
        if end < 0:
            return -1
        t, head = buf[i:i + 1], buf[i + 1:end]
        if t in (b"+", b"-", b":"):
            return end + 2
        if t == b"$":
            n = int(head)
            return end + 2 if n < 0 else (end + 2 + n + 2 if len(buf) >= end + 2 + n + 2 else -1)
        if t == b"*":
            j = end + 2
            for _ in range(max(0, int(head))):
                j = skip(j)
                if j < 0:
                    return -1
            return j
        raise ValueError("unexpected reply type %r" % t)
    return skip(0) == len(buf)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--match", default="scan:*")
    args = parser.parse_args()
    out = {}
    for name, cmd in (("slots", (b"CLUSTER", b"SLOTS")), ("nodes", (b"CLUSTER", b"NODES")),
                      ("shards", (b"CLUSTER", b"SHARDS"))):
        t = time.perf_counter()
        out[name + "_bytes"] = len(raw_reply_bytes(args.port, *cmd))
        out[name + "_ms"] = round((time.perf_counter() - t) * 1000, 1)
    starts = []
    for _ in range(args.starts):
        t = time.perf_counter()
        rc = RedisCluster(host="127.0.0.1", port=args.port, socket_timeout=10)
        starts.append(time.perf_counter() - t)
        rc.close()
    out["redis_py_start_ms"] = round(statistics.median(starts) * 1000, 1)
    rc = RedisCluster(host="127.0.0.1", port=args.port, socket_timeout=10)
    out["slot_ranges"] = len(rc.cluster_slots())
    out["primaries"] = len(rc.get_primaries())
    scanned = list(rc.scan_iter(match=args.match, count=100))
    out["scanned"] = len(scanned)
    out["scanned_distinct"] = len(set(scanned))
    out["dbsize_over_primaries"] = rc.dbsize(target_nodes=RedisCluster.PRIMARIES)
    try:
        rc.cluster_info()
        out["cluster_info_parses"] = True
    except ValueError:
        out["cluster_info_parses"] = False
    rc.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
