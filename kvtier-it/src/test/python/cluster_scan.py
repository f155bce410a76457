#!/usr/bin/python3
"""redis-py's RedisCluster reading a kvtier cluster's keyspace as a whole: the primaries it sees, a cluster-wide
SCAN (scan_iter, which visits every primary), KEYS and DBSIZE sent to every primary, RANDOMKEY and CLUSTER INFO
(which redis-py parses into a dict). Writes nothing. Prints one JSON summary line.

Usage: python3 cluster_scan.py --port 7000 --match 'scan:*'
"""
import argparse
import json

from redis.cluster import RedisCluster


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--match", default="*")
    args = parser.parse_args()
    rc = RedisCluster(host="127.0.0.1", port=args.port, socket_timeout=10, socket_connect_timeout=5)
    scanned = [k.decode() for k in rc.scan_iter(match=args.match, count=50)]
    keys = [k.decode() for k in rc.keys(args.match, target_nodes=RedisCluster.PRIMARIES)]
    info = rc.cluster_info()
    summary = {
        "nodes": len(rc.get_nodes()),
        "primaries": len(rc.get_primaries()),
        "replicas": len(rc.get_replicas()),
        "scanned": len(scanned),
        "scanned_distinct": len(set(scanned)),
        "keys": len(keys),
        "keys_distinct": len(set(keys)),
        "dbsize": rc.dbsize(target_nodes=RedisCluster.PRIMARIES),
        "randomkey_found": rc.randomkey() is not None,
        "cluster_state": info.get("cluster_state"),
        "cluster_known_nodes": info.get("cluster_known_nodes"),
    }
    rc.close()
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
