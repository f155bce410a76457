#!/usr/bin/env python3
"""Honest clients' latency while a server is attacked (issue 29): each attack of AbuseIT, run from processes of its
own against a running server (kvtier or redis-server), while a prober process sends PING and SET every 10 ms on one
connection and records the longest wait. Standard library only.

    bench/abuse-latency.py --port 6379 [--attacks multi,watch,lua] [--json out.json]

Prints one line per attack: the prober's longest PING and SET, how many of its commands failed (an error reply, or
no reply within 5 s), and whether the server answered PING afterwards. bench/abuse-latency.sh runs it against kvtier
and redis-server in turn.
"""
import argparse
import json
import os
import multiprocessing as mp
import socket
import sys
import time

from benchkit import Conn, encode


def prober(port, stop, out, password):
    """PING and SET every 10 ms on one connection; the longest wait of each, and the failures."""
    worst = {'PING': 0.0, 'SET': 0.0}
    slow = []  # (seconds, unix time) of the slowest commands
    failed = 0
    errors = {}
    c = None
    n = 0
    while not stop.is_set():
        try:
            if c is None:
                c = Conn(port)
                if password:
                    c.call('AUTH', password)
            for cmd in (('PING',), ('SET', 'honest-%d' % (n % 100), 'v%d' % n)):
                t0 = time.perf_counter()
                r = c.call(*cmd)
                dt = time.perf_counter() - t0
                worst[cmd[0]] = max(worst[cmd[0]], dt)
                if dt > 0.03:
                    slow.append((round(dt * 1000, 1), round(time.time() - dt, 3), cmd[0]))
                if isinstance(r, Exception):
                    failed += 1
                    key = str(r)[:60]
                    errors[key] = errors.get(key, 0) + 1
            n += 1
        except (OSError, ConnectionError) as e:
            failed += 1
            errors[type(e).__name__] = errors.get(type(e).__name__, 0) + 1
            if c is not None:
                c.close()
            c = None
        time.sleep(0.01)
    out.put({'ping_ms': round(worst['PING'] * 1000, 1), 'set_ms': round(worst['SET'] * 1000, 1),
             'commands': 2 * n, 'failed': failed, 'errors': errors,
             'slowest': sorted(slow, reverse=True)[:10]})


# ---- attacks: each runs in processes of its own and returns a short description of what happened to it ----

def multi_flood(port, i, password):
    """1.7 M inline SETs queued in MULTI, read but never EXECuted (about 15 MB per connection)."""
    import threading
    s = socket.create_connection(('127.0.0.1', port), timeout=120)
    if password:
        s.sendall(encode('AUTH', password))

    def drain():  # reads every +QUEUED: a client that reads nothing is only paused (its replies wait), not this attack
        try:
            while s.recv(1 << 20):
                pass
        except OSError:
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    s.sendall(b'MULTI\r\n')
    batch = b'SET k v\r\n' * 10_000
    sent = 0
    try:
        for _ in range(170):
            s.sendall(batch)
            sent += 10_000
        s.sendall(b'DISCARD\r\n')
        s.shutdown(socket.SHUT_WR)
        reader.join(120)
        return 'queued %d, discarded' % sent
    except OSError as e:
        return 'dropped after %d (%s)' % (sent, type(e).__name__)
    finally:
        s.close()


def watch_flood(port, i, password):
    """100,000 keys watched, in 10 WATCH commands of 10,000."""
    try:
        c = Conn(port, timeout=120)
        if password:
            c.call('AUTH', password)
        for b in range(10):
            r = c.call('WATCH', *['w%d-%d-%d' % (i, b, k) for k in range(10_000)])
            if isinstance(r, Exception):
                return 'refused after %d: %s' % (b * 10_000, str(r)[:60])
        time.sleep(2)
        r = c.call('PING')
        return 'watching 100000, still connected' if r == 'PONG' else 'after watching: %s' % r
    except (OSError, ConnectionError) as e:
        return 'dropped (%s)' % type(e).__name__


LUA_ALLOCATIONS = [
    "local s = 'x' for i = 1, 30 do s = s .. s end return #s",
    "return unpack({}, 1, 2e8)",
    "local t = {} local s = ('x'):rep(2^20) for i = 1, 430 do t[i] = s end return #table.concat(t)",
]


def lua_allocations(port, i, password):
    """One line of Lua asking for a GiB at once, each of three ways."""
    out = []
    c = Conn(port, timeout=120)
    if password:
        c.call('AUTH', password)
    for script in LUA_ALLOCATIONS:
        r = c.call('EVAL', script, 0)
        out.append(('error: ' + str(r)[:50]) if isinstance(r, Exception) else 'returned %s' % str(r)[:20])
    return '; '.join(out)


def lua_runaway(port, i, password):
    """A script that never ends (killed by SCRIPT KILL from the driver after 3 s)."""
    try:
        c = Conn(port, timeout=60)
        if password:
            c.call('AUTH', password)
        r = c.call('EVAL', 'while true do end', 1, 'loop%d' % i)
        return str(r)[:70]
    except (OSError, ConnectionError) as e:
        return 'dropped (%s)' % type(e).__name__


def run_attack(fn, port, i, password, results, nice):
    # On a small machine the attackers' own work (building millions of commands in Python) competes with the server
    # and the prober for the same cores; niced, they take what is idle, as attackers on other hosts would.
    os.nice(nice)
    try:
        results.put((fn.__name__, fn(port, i, password)))
    except Exception as e:  # an attacker's own failure is an outcome to report, not a reason to hang the driver
        results.put((fn.__name__, 'failed (%s: %s)' % (type(e).__name__, str(e)[:60])))


ATTACKS = {
    'multi': ('4 connections x 1.7 M inline SETs queued in MULTI', multi_flood, 4),
    'watch': ('19 connections x 100,000 watched keys', watch_flood, 19),
    'lua': ('Lua: a GiB string, unpack of 2e8, table.concat of 430 MiB', lua_allocations, 1),
    'runaway': ('Lua: two scripts that never end, then SCRIPT KILL', lua_runaway, 2),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--port', type=int, required=True)
    ap.add_argument('--password')
    ap.add_argument('--attacks', default='multi,watch,lua,runaway')
    ap.add_argument('--label', default='')
    ap.add_argument('--json')
    ap.add_argument('--nice', type=int, default=10, help='niceness of the attacker processes (0: none)')
    a = ap.parse_args()
    rows = []
    for name in a.attacks.split(','):
        title, fn, n = ATTACKS[name]
        stop, probe_out, results = mp.Event(), mp.Queue(), mp.Queue()
        probe = mp.Process(target=prober, args=(a.port, stop, probe_out, a.password))
        probe.start()
        time.sleep(1)
        t0 = time.time()
        procs = [mp.Process(target=run_attack, args=(fn, a.port, i, a.password, results, a.nice)) for i in range(n)]
        for p in procs:
            p.start()
        if name == 'runaway':
            # SCRIPT KILL answers NOTBUSY until a script has run lua-time-limit (5 s by default); Redis runs one
            # script at a time, so the second starts once the first is killed: kill until neither runs.
            time.sleep(5.5)
            killed = 0
            try:
                c = Conn(a.port, timeout=10)
                if a.password:
                    c.call('AUTH', a.password)
                deadline = time.time() + 30
                while killed < n and time.time() < deadline:
                    r = c.call('SCRIPT', 'KILL')
                    killed += 0 if isinstance(r, Exception) else 1
                    time.sleep(0.5)
                c.close()
            except (OSError, ConnectionError):
                pass
        outcomes = [results.get(timeout=300) for _ in procs]
        for p in procs:
            p.join(10)
        took = time.time() - t0
        time.sleep(1)
        stop.set()
        probe_result = probe_out.get(timeout=30)
        probe.join(10)
        try:
            c = Conn(a.port, timeout=5)
            if a.password:
                c.call('AUTH', a.password)
            alive = c.call('PING') == 'PONG'
            c.close()
        except (OSError, ConnectionError):
            alive = False
        summary = {}
        for _, o in outcomes:
            k = o.split(' after ')[0].split(' (')[0] if o.startswith('dropped') or o.startswith('refused') else o
            summary[k[:90]] = summary.get(k[:90], 0) + 1
        row = dict(label=a.label, attack=name, title=title, seconds=round(took, 1), alive=alive,
                   attackers=summary, **probe_result)
        rows.append(row)
        print('%-8s %-55s longest PING %7.1f ms, SET %7.1f ms; %d of %d honest commands failed %s; up after: %s; '
              'attackers: %s' % (a.label, title, row['ping_ms'], row['set_ms'], row['failed'], row['commands'],
                                 row['errors'] or '', alive, summary), flush=True)
        time.sleep(2)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
