#!/usr/bin/env python3
"""Memory per key, kvtier against Redis (issue 34): loads N distinct keys (key:<i>, values of --value-size bytes)
into a fresh server through pipelined SETs, then reports per key: kvtier's heap after a full GC (jcmd GC.run), what
--index-memory is charged (INFO used_memory_index) and the process's RSS; Redis's used_memory and RSS. kvtier keeps
the values in its memory and disk tiers (--memory, --disk), so with a small --memory the index is what stays in RAM.
Then it stops kvtier gracefully, starts it again on the same directory and times its recovery (until DBSIZE answers
N). Standard library only.

  bench/memory-per-key.py [--keys 1000000,10000000] [--value-size 1024] [--memory 256m] [--disk 16g]
                          [--index-memory 4g] [--no-redis] [--out FILE]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchkit  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = 2000


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_ready(port, proc, timeout=600.0):
    """Until PING answers PONG (not -LOADING, not refused); fails if the process died."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError('server exited with %s' % proc.returncode)
        try:
            c = benchkit.Conn(port, timeout=2.0)
            r = c.call('PING')
            c.s.close()
            if r == 'PONG':
                return
        except (OSError, ConnectionError):
            pass
        time.sleep(0.05)
    raise RuntimeError('server on %d not ready within %.0f s' % (port, timeout))


def load(port, keys, value_size):
    """SETs key:0 .. key:keys-1, BATCH a round trip; returns seconds taken."""
    c = benchkit.Conn(port, timeout=120.0)
    value = b'v' * value_size
    start = time.time()
    for first in range(0, keys, BATCH):
        n = min(BATCH, keys - first)
        c.s.sendall(b''.join(benchkit.encode(b'SET', b'key:%d' % i, value) for i in range(first, first + n)))
        for _ in range(n):
            r = c.reply()
            if isinstance(r, RuntimeError):
                raise RuntimeError('SET key:%d failed: %s' % (first, r))
    c.s.close()
    return time.time() - start


def info(port):
    c = benchkit.Conn(port, timeout=60.0)
    text = c.call('INFO', 'all')
    c.s.close()
    out = {}
    for line in (text.decode() if isinstance(text, bytes) else str(text)).splitlines():
        if ':' in line and not line.startswith('#'):
            k, v = line.split(':', 1)
            out[k] = v.strip()
    return out


def dbsize(port):
    c = benchkit.Conn(port, timeout=60.0)
    r = c.call('DBSIZE')
    c.s.close()
    return int(r)


def rss_bytes(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) * 1024
    return 0


def heap_after_gc(pid):
    """Heap in use right after a full collection, from jcmd (G1: 'garbage-first heap total N, used M')."""
    jcmd = os.path.join(os.environ.get('JAVA_HOME', '/usr/lib/jvm/temurin-25-jdk-amd64'), 'bin', 'jcmd')
    subprocess.run([jcmd, str(pid), 'GC.run'], check=True, capture_output=True, timeout=600)
    out = subprocess.run([jcmd, str(pid), 'GC.heap_info'], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if 'used' in line and 'heap' in line:
            used = line.split('used')[1].split()[0].rstrip(',')
            return parse_size(used)
    raise RuntimeError('no heap line in jcmd GC.heap_info: ' + out[:200])


def parse_size(s):
    units = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    s = s.strip()
    return int(s[:-1]) * units[s[-1].upper()] if s[-1].upper() in units else int(s)


def kvtier_run(keys, args):
    d = tempfile.mkdtemp(prefix='kvtier-mem-')
    port = free_port()
    cmd = [os.path.join(ROOT, 'kvtier'), 'server', '--port=%d' % port, '--dir=' + d, '--memory=' + args.memory,
           '--disk=' + args.disk, '--index-memory=' + args.index_memory]
    log = open(os.path.join(d, 'server.log'), 'w')
    try:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        wait_ready(port, proc)
        pid = proc.pid  # the launcher execs the JVM
        base_heap = heap_after_gc(pid)
        base_rss = rss_bytes(pid)
        secs = load(port, keys, args.value_size)
        heap = heap_after_gc(pid)
        rss = rss_bytes(pid)
        i = info(port)
        row = {'server': 'kvtier', 'keys': keys, 'value_size': args.value_size, 'load_s': round(secs, 1),
               'heap_per_key': round((heap - base_heap) / keys, 1), 'rss_per_key': round((rss - base_rss) / keys, 1),
               'index_per_key': round(int(i.get('used_memory_index', 0)) / keys, 1),
               'memory_values': int(i.get('used_memory_dataset', 0)), 'heap_bytes': heap, 'rss_bytes': rss}
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=600)
        start = time.time()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        wait_ready(port, proc)
        n = dbsize(port)
        row['recover_s'] = round(time.time() - start, 1)
        row['recovered_keys'] = n
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=600)
        return row
    finally:
        log.close()
        shutil.rmtree(d, ignore_errors=True)


def redis_run(keys, args):
    port = free_port()
    proc = subprocess.Popen(['redis-server', '--port', str(port), '--save', '', '--appendonly', 'no'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, proc)
        base = info(port)
        secs = load(port, keys, args.value_size)
        i = info(port)
        used = int(i['used_memory']) - int(base['used_memory'])
        rss = int(i['used_memory_rss']) - int(base['used_memory_rss'])
        # Redis holds the values in memory too: its per-key overhead is what is left without them.
        return {'server': 'redis', 'keys': keys, 'value_size': args.value_size, 'load_s': round(secs, 1),
                'used_per_key': round(used / keys, 1), 'rss_per_key': round(rss / keys, 1),
                'overhead_per_key': round(used / keys - args.value_size, 1)}
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--keys', default='1000000')
    p.add_argument('--value-size', type=int, default=1024)
    p.add_argument('--memory', default='256m')
    p.add_argument('--disk', default='16g')
    p.add_argument('--index-memory', default='4g')
    p.add_argument('--no-redis', action='store_true')
    p.add_argument('--out')
    args = p.parse_args()
    rows = []
    for keys in (int(k) for k in args.keys.split(',')):
        rows.append(kvtier_run(keys, args))
        print(json.dumps(rows[-1]), flush=True)
        if not args.no_redis:
            rows.append(redis_run(keys, args))
            print(json.dumps(rows[-1]), flush=True)
    if args.out:
        with open(args.out, 'w') as f:
            json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
