#!/usr/bin/env python3
"""The two-tier model behind docs/simulate.md's "Disk admission" (issue 30): which chunks leaving memory the disk
should take, on a trace in Mooncake's format (hash_ids of 512-token blocks).

Memory is an LRU of blocks, the disk a FIFO of blocks fed by memory's victims (a block leaving memory is written
unless the disk has it; a disk hit copies it back to memory, keeping the disk copy). Each request's blocks are
looked up in order until the first miss, then the blocks from the miss on are stored. Rules for a victim never
read since it was stored ("unread"; read ones are always written):

  all          write it (kvtier's default)
  second       write it only if it was dropped once before and stored again (reject-first, a ghost of dropped
               keys: admission on a second access, as Dynamo KVBM's disk tier and CacheLib's reject-first)
  hash50       write half of them, chosen by key hash (CacheLib's random admission)
  runs50       write half of them, in runs of 32 victims in a row (time-sliced, as a rate limit does)

Prints hit blocks over all blocks and blocks written to disk per unique block, at memory and disk sizes given as
shares of the trace's unique blocks. Figures differ from ./kvtier simulate (the store's own code: pages, regions,
batches); compare within a row.

    bench/admission-model.py conversation_trace.jsonl    # a few minutes of CPU
"""
import json
import sys
from collections import OrderedDict, Counter


class Tiers:
    def __init__(s, mem, disk, rule):
        s.M, s.D, s.rule = mem, disk, rule
        s.mem, s.disk, s.ghost = OrderedDict(), OrderedDict(), OrderedDict()
        s.read = Counter()
        s.writes = s.victims = 0

    def has(s, b):
        return b in s.mem or b in s.disk

    def admits(s, b):
        if s.read[b] or s.rule == 'all':
            return True
        s.victims += 1
        if s.rule == 'second':
            if b in s.ghost:
                del s.ghost[b]
                return True
            s.ghost[b] = 1
            if len(s.ghost) > s.D:
                s.ghost.popitem(last=False)
            return False
        if s.rule == 'hash50':
            return (b * 2654435761) & 0xffffffff < 0x80000000
        return (s.victims // 32) % 2 == 0  # runs50

    def demote(s, b):
        if b in s.disk or not s.admits(b):
            return
        s.writes += 1
        s.disk[b] = 1
        while len(s.disk) > s.D:
            s.disk.popitem(last=False)

    def request(s, h, k):
        for b in h[:k]:
            s.read[b] += 1
            if b in s.mem:
                s.mem.move_to_end(b)
            else:
                s.mem[b] = 1
        for b in h[k:]:
            if b in s.mem:
                s.mem.move_to_end(b)
            elif b not in s.disk:
                s.read[b] = 0
                s.mem[b] = 1
        while len(s.mem) > s.M:
            v, _ = s.mem.popitem(last=False)
            s.demote(v)


def run(reqs, t):
    hit = tot = 0
    for r in reqs:
        h = r['hash_ids']
        tot += len(h)
        k = 0
        for b in h:
            if not t.has(b):
                break
            k += 1
        hit += k
        t.request(h, k)
    return 100.0 * hit / tot


def main():
    reqs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    unique = len({b for r in reqs for b in r['hash_ids']})
    print('memory disk  ' + '  '.join(f'{rule:>16}' for rule in ('all', 'second', 'hash50', 'runs50')))
    for mf in (0.005, 0.05):
        for df in (0.1, 0.3, 1.0):
            cells = []
            for rule in ('all', 'second', 'hash50', 'runs50'):
                t = Tiers(int(unique * mf), int(unique * df), rule)
                cells.append(f'{run(reqs, t):5.1f}% w{t.writes / unique:4.2f}')
            print(f'{mf:6.1%} {df:4.0%}  ' + '  '.join(f'{c:>16}' for c in cells), flush=True)


if __name__ == '__main__':
    main()
