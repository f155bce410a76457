#!/usr/bin/env python3
"""SETs through the disk tier with its direct I/O on and off (issue 30), alternating: a kvtier node with
--memory 64m takes --gib GiB of --value-mib MiB values from --connections processes (nearly all demoted to disk);
then fincore(1) says how much of the region files the page cache holds. Off is -Dkvtier.disk.direct=false (every
read and write through the page cache, as before 2026-12-01). Needs fincore (util-linux) and root for dropping the
page cache between runs.

    bench/disk-direct-ab.py [--dir /var/tmp/kvtier-direct-ab] [--gib 1] [--value-mib 4] [--connections 8] [--rounds 3]
"""
import argparse
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchkit import drop_page_cache  # noqa: E402

spec = importlib.util.spec_from_file_location('disk_vs_fio', os.path.join(HERE, 'disk-vs-fio.py'))
dvf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dvf)


def one(a, direct):
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)
    drop_page_cache()
    before = os.environ.get('KVTIER_JAVA_OPTS')
    if not direct:  # the launcher passes it to the node's JVM
        os.environ['KVTIER_JAVA_OPTS'] = ((before or '') + ' -Dkvtier.disk.direct=false').strip()
    try:
        node = dvf.start_node(a, '64m', 'node.log')
    finally:
        if before is None:
            os.environ.pop('KVTIER_JAVA_OPTS', None)
        else:
            os.environ['KVTIER_JAVA_OPTS'] = before
    try:
        size = a.value_mib << 20
        n = (a.gib << 30) // size
        wall, _ = dvf.run(dvf.writer, a.port, [list(range(c, n, a.connections)) for c in range(a.connections)], size)
        time.sleep(2)  # the demoter settles
        files = glob.glob(a.dir + '/data/region-*')
        rows = subprocess.run(['fincore', '-b', '-n', '-o', 'RES,SIZE'] + files, check=True, capture_output=True,
                              text=True).stdout.split('\n')
        cached = sum(int(r.split()[0]) for r in rows if r.strip())
        total = sum(int(r.split()[1]) for r in rows if r.strip())
        print('direct I/O %-3s: SET %d x %d MiB by %d connections %.2f GB/s; region files %d MiB, %d MiB of them in '
              'the page cache' % ('on' if direct else 'off', n, a.value_mib, a.connections, n * size / wall / 1e9,
                                  total >> 20, cached >> 20), flush=True)
    finally:
        node.terminate()
        node.wait(60)
        shutil.rmtree(a.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--dir', default='/var/tmp/kvtier-direct-ab')
    ap.add_argument('--gib', type=int, default=1)
    ap.add_argument('--value-mib', type=int, default=4)
    ap.add_argument('--connections', type=int, default=8)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--port', type=int, default=7398)
    a = ap.parse_args()
    a.server_args = ''
    for _ in range(a.rounds):
        for direct in (True, False):
            one(a, direct)


if __name__ == '__main__':
    sys.exit(main())
