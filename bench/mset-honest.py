#!/usr/bin/env python3
"""A large MSET beside an honest writer (issue 34, item 3): one connection sends MSET of 20,000 keys of 16 KiB
(320 MiB) in one write while another SETs a 1 KiB value every 20 ms; prints the MSET's time and the honest SETs'
worst latency while the MSET runs. kvtier runs with --memory 256m --disk 2g (its defaults otherwise), Redis with
no maxmemory. With --warm N the same MSET is first sent N times under other keys, each followed by FLUSHALL, then the
measured one runs after a 3 s pause: the figure of a node whose JIT has compiled the path (a fresh JVM's first MSET
also pays for compiling it, about 0.6 s of a core here). With --keep the warm-ups' keys stay: the measured MSET then
finds memory full of older values that must go to disk first. Standard library only.

  bench/mset-honest.py kvtier [launcher] [--warm N [--keep]]   e.g. bench/mset-honest.py kvtier /tmp/base/kvtier --warm 3
  bench/mset-honest.py redis [--warm N [--keep]]
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchkit  # noqa: E402

spec = importlib.util.spec_from_file_location('mpk', os.path.join(HERE, 'memory-per-key.py'))
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
args = sys.argv[1:]
warm = 0
if '--warm' in args:
    i = args.index('--warm'); warm = int(args[i + 1]); del args[i:i + 2]
    if not 0 <= warm <= 99:
        sys.exit('--warm takes 0 to 99')  # a warm-up's keys are as long as the measured ones: w07: for big:
keep = '--keep' in args
if keep:
    args.remove('--keep')
which = args[0]; launcher = args[1] if len(args) > 1 else os.path.join(os.path.dirname(HERE), 'kvtier')
port = m.free_port(); d = tempfile.mkdtemp()
if which == 'redis':
    p = subprocess.Popen(['redis-server', '--port', str(port), '--save', '', '--appendonly', 'no'], stdout=subprocess.DEVNULL)
else:
    p = subprocess.Popen([launcher, 'server', '--port=%d' % port, '--dir=' + d, '--memory=256m', '--disk=2g'], stdout=open(d + '.log', 'w'), stderr=subprocess.STDOUT)
try:
    m.wait_ready(port, p)
    n, size = 20000, 16384
    val = b'x' * size
    stop = threading.Event(); lat = []; T0 = [time.time()]
    def honest():
        c = benchkit.Conn(port, timeout=60)
        i = 0
        while not stop.is_set():
            t = time.time(); r = c.call('SET', 'honest:%d' % i, b'h' * 1024); lat.append(time.time() - t); i += 1
            if lat[-1] > 0.1: print('slow honest SET %.3f s, started at %.3f' % (lat[-1], t - T0[0]))
            if isinstance(r, RuntimeError): print('honest error', r)
            time.sleep(0.02)
    th = threading.Thread(target=honest); th.start(); time.sleep(0.5)
    c = benchkit.Conn(port, timeout=120)
    parts = [b'*%d\r\n$4\r\nMSET\r\n' % (1 + 2 * n)]
    for i in range(n):
        k = b'big:%d' % i
        parts.append(b'$%d\r\n%s\r\n$%d\r\n' % (len(k), k, size)); parts.append(val); parts.append(b'\r\n')
    payload = b''.join(parts)
    for w in range(warm):
        c.s.sendall(payload.replace(b'big:', b'w%02d:' % w)); c.reply()
        if not keep:
            c.call('FLUSHALL')
        time.sleep(1)
    if warm:
        time.sleep(3)
    first = len(lat)
    t0 = time.time(); T0[0] = t0; c.s.sendall(payload); ts = time.time(); r = c.reply(); t1 = time.time(); print('sent after %.3f s' % (ts - t0))
    time.sleep(0.3); stop.set(); th.join()
    lat = sorted(lat[first:])
    print(which, 'MSET %.2f s' % (t1 - t0), r, 'warm-ups %d%s' % (warm, ' kept' if keep else ''), 'honest SETs', len(lat),
          'max %.3f s p99 %.3f s' % (lat[-1], lat[int(len(lat) * 0.99)]))
finally:
    p.terminate(); p.wait(); shutil.rmtree(d)
    if os.path.exists(d + '.log'):
        os.remove(d + '.log')
