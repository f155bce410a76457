#!/usr/bin/python3
"""redis-py's transactions as applications use them, against one server; prints one JSON object of what every step
returned, so that the same run against redis-server and against kvtier can be compared line for line.

- the default pipeline (transaction=True: MULTI ... EXEC), with a 4 MiB value inside;
- a command that fails at run time (its error in place, the others run) and one refused while queuing (EXECABORT);
- WATCH broken by another client's write (WatchError) and by a TTL change;
- Redis's optimistic-locking recipe, r.transaction(fn, key), from several threads at once: every increment counts.

Usage: python3 transactions.py --port 6379 [--threads 4] [--increments 100]
"""
import argparse
import hashlib
import json
import threading

import redis


def outcome(fn):
    """What a call returned, or the class and text of what it raised."""
    try:
        return {"ok": normalize(fn())}
    except redis.exceptions.RedisError as e:
        return {"error": type(e).__name__, "text": str(e)}


def normalize(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace") if len(v) < 1024 else "<%d bytes sha1 %s>" % (
            len(v), hashlib.sha1(v).hexdigest())
    if isinstance(v, (list, tuple)):
        return [normalize(x) for x in v]
    if isinstance(v, Exception):
        return {"error": type(v).__name__, "text": str(v)}
    return v


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--increments", type=int, default=100)
    args = parser.parse_args()
    r = redis.Redis(host="127.0.0.1", port=args.port, socket_timeout=30)
    other = redis.Redis(host="127.0.0.1", port=args.port, socket_timeout=30)
    r.flushall()
    out = {}
    big = bytes(range(256)) * (4 << 12)  # 4 MiB

    def default_pipeline():
        p = r.pipeline()  # transaction=True by default
        p.set("tx:a", "1").get("tx:a").set("tx:big", big).strlen("tx:big").get("tx:big").delete("tx:a")
        p.exists("tx:a").expire("tx:big", 1000).ttl("tx:big")
        return p.execute()
    out["default_pipeline"] = outcome(default_pipeline)

    def runtime_error():
        p = r.pipeline()
        p.set("tx:b", "1").execute_command("SET", "tx:b", "2", "XX", "NX").get("tx:b")
        return p.execute(raise_on_error=False)
    out["runtime_error"] = outcome(runtime_error)

    def queuing_error():
        p = r.pipeline()
        p.set("tx:c", "1").execute_command("NOSUCHCOMMAND", "x").get("tx:c")
        return p.execute()
    out["queuing_error"] = outcome(queuing_error)
    out["after_queuing_error"] = outcome(lambda: r.get("tx:c"))

    def watch_broken_by_write():
        with r.pipeline() as p:
            p.watch("tx:w")
            other.set("tx:w", "changed")
            p.multi()
            p.set("tx:w", "mine")
            return p.execute()
    out["watch_broken_by_write"] = outcome(watch_broken_by_write)
    out["after_watch_broken"] = outcome(lambda: r.get("tx:w"))

    def watch_broken_by_ttl():
        with r.pipeline() as p:
            p.watch("tx:w")
            other.expire("tx:w", 100)
            p.multi()
            p.set("tx:w", "mine")
            return p.execute()
    out["watch_broken_by_ttl"] = outcome(watch_broken_by_ttl)

    def watch_kept():
        with r.pipeline() as p:
            p.watch("tx:w")
            other.set("tx:unrelated", "x")
            value = p.get("tx:w")
            p.multi()
            p.set("tx:w", value + b"+1")
            return p.execute()
    out["watch_kept"] = outcome(watch_kept)
    out["after_watch_kept"] = outcome(lambda: r.get("tx:w"))

    r.set("tx:counter", 0)
    failures = []

    def increment(p):
        current = int(p.get("tx:counter"))
        p.multi()
        p.set("tx:counter", current + 1)

    def worker():
        client = redis.Redis(host="127.0.0.1", port=args.port, socket_timeout=30)
        try:
            for _ in range(args.increments):
                client.transaction(increment, "tx:counter")
        except redis.exceptions.RedisError as e:
            failures.append(str(e))

    threads = [threading.Thread(target=worker) for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out["optimistic_increments"] = {"expected": args.threads * args.increments,
                                    "counter": int(r.get("tx:counter")), "failures": failures}
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
