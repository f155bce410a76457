#!/usr/bin/env python3
"""What KVC.PREFETCH buys a prompt's load (issue 30): against a running kvtier node, writes --chunks chunks of
--chunk-mib MiB (LMCache-shaped keys), more than --memory holds, so the oldest go to disk; then, for prompts of
--prompt-chunks chunks all on disk, times loading them as LMCache does (a GET per chunk, in order) three ways, each
on prompts of its own, with the page cache dropped first (root only; else disk reads may come from the page cache):
  disk:      straight from disk;
  prefetch:  KVC.PREFETCH of the prompt's chunks, then --lead-ms (the request's way to the engine and its queue), then
             the GETs;
  memory:    chunks still in memory (the ceiling).
Prints the median and worst load time of each, and the node's INFO kvcache prefetch counters. Standard library only.

    bench/prefetch.py --port 6379 [--chunks 96] [--chunk-mib 16] [--prompt-chunks 8] [--lead-ms 50] [--prompts 4]
"""
import argparse
import os
import statistics
import time

from benchkit import Conn, drop_page_cache


def key(i):
    return 'bench-model@1@0@%016x@bfloat16kv_bytes' % (0x9e3779b97f4a7c15 * (i + 1) % (1 << 64))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--port', type=int, required=True)
    ap.add_argument('--chunks', type=int, default=96)
    ap.add_argument('--chunk-mib', type=int, default=16)
    ap.add_argument('--prompt-chunks', type=int, default=8)
    ap.add_argument('--prompts', type=int, default=4)
    ap.add_argument('--lead-ms', type=int, default=50)
    a = ap.parse_args()
    c = Conn(a.port, timeout=60)
    value = os.urandom(a.chunk_mib << 20)
    for i in range(a.chunks):
        r = c.call('SET', key(i), value)
        if r != 'OK':
            raise SystemExit('SET %s: %s' % (key(i), r))
    time.sleep(2)  # the demoter settles
    where = c.call('KVC.LOOKUP', *[key(i) for i in range(a.chunks)])
    on_disk = [i for i, w in enumerate(where) if w == b'disk']
    in_memory = [i for i, w in enumerate(where) if w == b'memory']
    need = a.prompts * a.prompt_chunks
    if len(on_disk) < 2 * need or len(in_memory) < need:
        raise SystemExit('need %d chunks on disk and %d in memory, have %d and %d: change --chunks or the node\'s '
                         '--memory' % (2 * need, need, len(on_disk), len(in_memory)))
    dropped = drop_page_cache()

    def load(chunks):
        t0 = time.perf_counter()
        for i in chunks:
            v = c.call('GET', key(i))
            assert v is not None and len(v) == len(value)
        return (time.perf_counter() - t0) * 1000

    results = {'disk': [], 'prefetch': [], 'memory': []}
    for p in range(a.prompts):
        results['disk'].append(load(on_disk[p * a.prompt_chunks:(p + 1) * a.prompt_chunks]))
        mine = on_disk[need + p * a.prompt_chunks:need + (p + 1) * a.prompt_chunks]
        c.call('KVC.PREFETCH', *[key(i) for i in mine])
        time.sleep(a.lead_ms / 1000)
        results['prefetch'].append(load(mine))
        results['memory'].append(load(in_memory[-(p + 1) * a.prompt_chunks:len(in_memory) - p * a.prompt_chunks]))
    mib = a.prompt_chunks * a.chunk_mib
    print('prompt of %d chunks x %d MiB (%d MiB), %d prompts each, lead %d ms, page cache %s' % (
        a.prompt_chunks, a.chunk_mib, mib, a.prompts, a.lead_ms, 'dropped' if dropped else 'NOT dropped (not root)'))
    for name, ms in results.items():
        print('  %-9s median %7.1f ms  worst %7.1f ms  (%.2f GB/s at the median)' % (
            name, statistics.median(ms), max(ms), mib * 1.048576 / statistics.median(ms)))
    info = c.call('INFO', 'kvcache').decode()
    print('  ' + ' '.join(l for l in info.split('\r\n') if l.startswith('kvcache_prefetch') or
                          l.startswith('kvcache_prefetched')))


if __name__ == '__main__':
    main()
