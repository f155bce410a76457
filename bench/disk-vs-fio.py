#!/usr/bin/env python3
"""kvtier's disk tier against the device, in one run (issue 30): fio at the same block size and queue depth, then a
kvtier node whose memory holds a fraction of what is written.

  1. fio, O_DIRECT, on a file in --dir: random reads of --value-mib blocks at queue depth --connections, and
     sequential writes of the same blocks (libaio); then the disk tier's own path in one JVM (kvtier-jmh's
     DiskPathBench: the same GiB appended and forced, then read back at random by --connections threads).
  2. kvtier (./kvtier server --memory --memory --disk ...): --gib GiB of --value-mib MiB values SET by --connections
     processes (their rate is the disk tier's write path: nearly all of it is demoted), the page cache dropped
     (root only), then every value on disk read back once in random order by --connections processes, each value
     checked. The values still in memory, read as many times, and the same SETs into a node whose memory holds them
     all, give these Python clients' own ceilings.
  3. The same SETs by kvtier's own load generator (`./kvtier bench setget`, Java, --connections connections), whose
     ceiling is far above the disk's: into a fresh node with --memory, so that nearly all of it is demoted (SET to
     disk end to end, with p50/p99), and into a node whose memory holds it all (that client's ceiling).

Prints GB/s for each and kvtier's ratio to fio. Needs fio (Debian's package) and root for the page cache.

    bench/disk-vs-fio.py [--dir /var/tmp/kvtier-disk] [--gib 2] [--value-mib 4] [--connections 8] [--memory 64m]
"""
import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import subprocess
import sys
import time

from benchkit import Conn, drop_page_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fio(directory, rw, block_mib, depth, size_gib, seconds=15, fresh=False):
    """fio's bandwidth and p50/p99 completion latency. ``fresh``: one pass writing a new file (no preallocation,
    fsync at the end), as the disk tier appends to new region files; otherwise --seconds time-based, which for
    writes overwrites blocks the first pass allocated (faster than any append to a new file)."""
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    how = ['--fallocate=none', '--end_fsync=1'] if fresh else ['--runtime=%d' % seconds, '--time_based']
    out = subprocess.run(['fio', '--name=dev', '--directory=' + directory, '--rw=' + rw, '--bs=%dm' % block_mib,
                          '--direct=1', '--ioengine=libaio', '--iodepth=%d' % depth, '--size=%dg' % size_gib]
                         + how + ['--group_reporting', '--output-format=json'],
                         check=True, capture_output=True, text=True).stdout
    job = json.loads(out)['jobs'][0]
    part = job['read'] if rw.endswith('read') else job['write']
    return part['bw_bytes'] / 1e9, part['clat_ns']['percentile'].get('50.000000', 0) / 1e6, \
        part['clat_ns']['percentile'].get('99.000000', 0) / 1e6


def key(i):
    return 'disk-bench-%06d' % i


def value(i, size):
    head = (b'%012d' % i) * 8
    return head + bytes(size - len(head))


def writer(port, keys, size, out):
    c = Conn(port, timeout=120)
    t0 = time.perf_counter()
    buf = bytearray(size)  # each value is its key's number then zeros: only the head changes
    for i in keys:
        head = value(i, 96)
        buf[:len(head)] = head
        r = c.set_large(key(i), buf)
        if r != 'OK':
            raise SystemExit('SET %s: %s' % (key(i), r))
    out.put(time.perf_counter() - t0)


def reader(port, keys, size, out):
    c = Conn(port, timeout=120)
    lat = []
    t0 = time.perf_counter()
    out_buf = bytearray(size + 2)
    for i in keys:
        s = time.perf_counter()
        n = c.get_into(key(i), out_buf)
        lat.append(time.perf_counter() - s)
        if n != size or out_buf[:12] != b'%012d' % i:
            raise SystemExit('GET %s: wrong value' % key(i))
    out.put((time.perf_counter() - t0, lat))


def run(target, port, parts, size):
    out = mp.Queue()
    procs = [mp.Process(target=target, args=(port, p, size, out)) for p in parts]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    return time.perf_counter() - t0, results


def disk_path(a):
    """The disk tier alone, in one JVM with no network or client (kvtier-jmh's DiskPathBench): appends forced to
    stable storage, then random verified reads by --connections threads. Builds benchmarks.jar if it is missing."""
    jar = ROOT + '/kvtier-jmh/target/benchmarks.jar'
    if not os.path.exists(jar):
        subprocess.run(['bash', '-c', '. bin/java-home.sh && kvtier_find_java && ./mvnw -B -q -pl kvtier-jmh -am '
                        'package -DskipTests'], cwd=ROOT, check=True)
    home = subprocess.run(['bash', '-c', '. bin/java-home.sh && kvtier_find_java && echo "$JAVA_HOME"'], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout.strip()
    java = os.path.join(home, 'bin', 'java')
    out = subprocess.run([java, '--sun-misc-unsafe-memory-access=allow', '-cp', jar, 'io.kvtier.jmh.DiskPathBench',
                          a.dir + '/path', str(a.gib), str(a.value_mib), str(a.connections)],
                         check=True, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.startswith('disk tier')]


def start_node(a, memory, log):
    """A kvtier node on --port with data in --dir, once it answers PING (at most 40 s)."""
    node = subprocess.Popen([ROOT + '/kvtier', 'server', '--port', str(a.port), '--dir', a.dir + '/data', '--memory',
                             memory, '--disk', '%dg' % (a.gib * 2)] + a.server_args.split(), stdout=open(a.dir + '/' + log, 'w'),
                            stderr=subprocess.STDOUT)
    for _ in range(200):
        try:
            Conn(a.port).call('PING')
            return node
        except OSError:
            time.sleep(0.2)
    node.terminate()
    raise SystemExit('no kvtier node on port %d after 40 s: see %s/%s' % (a.port, a.dir, log))


def java_set(a, memory, log):
    """SET of --gib GiB of --value-mib values by ./kvtier bench setget into a fresh node: GB/s, p50 ms, p99 ms."""
    shutil.rmtree(a.dir + '/data', ignore_errors=True)
    node = start_node(a, memory, log)
    try:
        n = (a.gib << 30) // (a.value_mib << 20)
        out = a.dir + '/setget'
        subprocess.run([ROOT + '/kvtier', 'bench', 'setget', '-p', str(a.port), '-s', '%dm' % a.value_mib,
                        '-c', str(a.connections), '-n', str(n), '--key-space', str(n), '--warmup', '0', '-o', out],
                       check=True, capture_output=True, text=True)
        with open(out + '/setget.json') as f:
            r = next(x for x in json.load(f)['results'] if x['op'] == 'SET')
        return r['bytes'] / r['seconds'] / 1e9, r['latencyMs']['p50'], r['latencyMs']['p99']
    finally:
        node.terminate()
        node.wait(60)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--dir', default='/var/tmp/kvtier-disk-bench')
    ap.add_argument('--gib', type=int, default=2)
    ap.add_argument('--value-mib', type=int, default=4)
    ap.add_argument('--connections', type=int, default=8)
    ap.add_argument('--memory', default='64m')
    ap.add_argument('--port', type=int, default=7397)
    ap.add_argument('--server-args', default='', help='more flags for ./kvtier server, e.g. "--disk-threads 8"')
    ap.add_argument('--skip-fio', action='store_true', help='kvtier only (for A/B runs of the server)')
    a = ap.parse_args()
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)  # fio() makes its own directory afresh for each job
    if a.skip_fio:
        read_gbs = write_gbs = float('nan')
        read_p50 = read_p99 = write_p50 = write_p99 = float('nan')
    else:
        read_gbs, read_p50, read_p99 = fio(a.dir + '/fio', 'randread', a.value_mib, a.connections, a.gib)
        write_gbs, write_p50, write_p99 = fio(a.dir + '/fio', 'write', a.value_mib, a.connections, a.gib, fresh=True)
        over_gbs, _, _ = fio(a.dir + '/fio', 'write', a.value_mib, a.connections, a.gib)
    shutil.rmtree(a.dir + '/fio', ignore_errors=True)
    path = [] if a.skip_fio else disk_path(a)
    print('fio O_DIRECT %d MiB blocks, depth %d: random read %.2f GB/s (p50 %.1f ms, p99 %.1f ms), sequential '
          'write of a new file %.2f GB/s (p50 %.1f ms, p99 %.1f ms; overwriting its blocks: %.2f GB/s)' % (
              a.value_mib, a.connections, read_gbs, read_p50, read_p99, write_gbs, write_p50, write_p99,
              float('nan') if a.skip_fio else over_gbs), flush=True)
    for line, fio_gbs, what in zip(path, (write_gbs, read_gbs), ('fio write of a new file', 'fio random read')):
        gbs = float(line.split(' GB/s')[0].split()[-1])
        print('%s (%.2f of %s)' % (line, gbs / fio_gbs, what), flush=True)

    node = start_node(a, a.memory, 'node.log')
    try:
        size = a.value_mib << 20
        n = (a.gib << 30) // size
        parts = [list(range(c, n, a.connections)) for c in range(a.connections)]
        wall, _ = run(writer, a.port, parts, size)
        set_gbs = n * size / wall / 1e9
        time.sleep(3)  # the demoter settles
        where = Conn(a.port).call('KVC.LOOKUP', *[key(i) for i in range(n)])
        on_disk = [i for i, w in enumerate(where) if w == b'disk']
        in_memory = [i for i, w in enumerate(where) if w == b'memory']
        dropped = drop_page_cache()
        random.seed(1)
        random.shuffle(on_disk)
        wall, results = run(reader, a.port, [on_disk[c::a.connections] for c in range(a.connections)], size)
        get_gbs = len(on_disk) * size / wall / 1e9
        lat = sorted(x for _, ls in results for x in ls)
        mem_gbs = float('nan')
        if in_memory:  # as many reads as from disk, of the few values memory holds, over and over
            again = [in_memory[i % len(in_memory)] for i in range(len(on_disk))]
            wall, _ = run(reader, a.port, [again[c::a.connections] for c in range(a.connections)], size)
            mem_gbs = len(again) * size / wall / 1e9
        print('kvtier --memory %s: SET %d x %d MiB by %d connections %.2f GB/s (%.2f of fio write); GET of the %d on '
              'disk, random order, page cache %s: %.2f GB/s (%.2f of fio read), p50 %.1f ms, p99 %.1f ms; GET of the %d '
              'in memory, as many times (the clients\' ceiling): %.2f GB/s' % (
                  a.memory, n, a.value_mib, a.connections, set_gbs, set_gbs / write_gbs, len(on_disk),
                  'dropped' if dropped else 'NOT dropped (not root)', get_gbs, get_gbs / read_gbs,
                  lat[len(lat) // 2] * 1000, lat[int(len(lat) * 0.99)] * 1000, len(in_memory), mem_gbs))
    finally:
        node.terminate()
        node.wait(60)
    # The same writes to a node whose memory holds them all: these Python clients' own SET ceiling.
    shutil.rmtree(a.dir + '/data', ignore_errors=True)
    node = start_node(a, '%dm' % (a.gib * 1024 + 512), 'node2.log')
    try:
        wall, _ = run(writer, a.port, parts, size)
        print('the same SETs into memory that holds them all (the clients\' ceiling): %.2f GB/s'
              % (n * size / wall / 1e9), flush=True)
    finally:
        node.terminate()
        node.wait(60)
    try:
        gbs, p50, p99 = java_set(a, a.memory, 'node3.log')
        print('kvtier bench setget (Java) --memory %s: SET %d x %d MiB by %d connections %.2f GB/s (%.2f of fio write), '
              'p50 %.1f ms, p99 %.1f ms' % (a.memory, n, a.value_mib, a.connections, gbs, gbs / write_gbs, p50, p99),
              flush=True)
        gbs, p50, p99 = java_set(a, '%dm' % (a.gib * 1024 + 512), 'node4.log')
        print('the same SETs into memory that holds them all (that client\'s ceiling): %.2f GB/s, p50 %.1f ms, '
              'p99 %.1f ms' % (gbs, p50, p99))
    finally:
        shutil.rmtree(a.dir, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
