#!/usr/bin/env python3
"""The small eviction models behind docs/simulate.md's "Eviction policies compared" (issue 30), on a trace in
Mooncake's format (hash_ids of 512-token blocks, e.g. FAST25-release/traces/conversation_trace.jsonl).

Each request's blocks are looked up in order until the first miss (its hits), then the blocks from the miss on are
stored; the figure is hit blocks over all blocks. Unlike ./kvtier simulate (the store's own code, the figures to
trust), a block here is one slot, a prompt's partial last block is stored too and no disk tier is modelled: compare
within a row. Prints, at 0.5, 2, 5, 10, 20 and 50% of the trace's unique blocks:

  lru        every hit moves the block to the fresh end
  s3fifo     S3-FIFO (10% probation, frequency 0..3, ghosts)
  arc        ARC
  clock1     CLOCK with one reference bit (what S3-FIFO's main queue is with one bit)
  min        Belady with admission: evict, or never store, the block used farthest in the future (clairvoyant)
  hint100/90/80
             LRU in which a request's new blocks enter at the cold end when a hint says its conversation will not
             come back; the hint is right with that probability (deterministic, seed 1)

    bench/policy-model.py conversation_trace.jsonl    # about a minute of CPU for the conversation trace
"""
import json
import random
import sys
from collections import OrderedDict

INF = float('inf')
SHARES = (0.005, 0.02, 0.05, 0.1, 0.2, 0.5)


def run(reqs, policy):
    hit = tot = 0
    for r in reqs:
        h = r['hash_ids']
        tot += len(h)
        k = 0
        for b in h:
            if policy.has(b):
                k += 1
            else:
                break
        hit += k
        policy.request(h, k)
    return 100.0 * hit / tot


class Lru:
    def __init__(s, cap):
        s.c = OrderedDict()
        s.cap = cap

    def has(s, b):
        return b in s.c

    def request(s, h, k):
        for b in h[:k]:
            s.c.move_to_end(b)
        for b in h[k:]:
            if b not in s.c:
                s.c[b] = 1
                while len(s.c) > s.cap:
                    s.c.popitem(last=False)


class Hint(Lru):
    """LRU; a request's new blocks go to the cold end unless the hint (right with probability acc) says it returns."""

    def __init__(s, cap, returns, acc):
        super().__init__(cap)
        s.returns = returns
        s.acc = acc
        s.rnd = random.Random(1)
        s.i = 0

    def request(s, h, k):
        truth = s.returns[s.i]
        s.i += 1
        hint = truth if s.rnd.random() < s.acc else not truth
        for b in h[:k]:
            s.c.move_to_end(b)
        for b in h[k:]:
            if b not in s.c:
                s.c[b] = 1
                if not hint:
                    s.c.move_to_end(b, last=False)
        while len(s.c) > s.cap:
            s.c.popitem(last=False)


class S3Fifo:
    def __init__(s, cap):
        s.cap = cap
        s.small = OrderedDict()
        s.main = OrderedDict()
        s.ghosts = OrderedDict()

    def has(s, b):
        return b in s.small or b in s.main

    def request(s, h, k):
        for b in h[:k]:
            q = s.small if b in s.small else s.main
            q[b] = min(3, q[b] + 1)
        for b in h[k:]:
            if s.has(b):
                continue
            if b in s.ghosts:
                del s.ghosts[b]
                s.main[b] = 0
            else:
                s.small[b] = 0
            while len(s.small) + len(s.main) > s.cap:
                s.evict()

    def evict(s):
        if s.small and (len(s.small) >= 0.1 * s.cap or not s.main):
            b, f = s.small.popitem(last=False)
            if f > 0:
                s.main[b] = 0
            else:
                s.ghosts[b] = 1
                if len(s.ghosts) > s.cap:
                    s.ghosts.popitem(last=False)
            return
        while True:
            b, f = s.main.popitem(last=False)
            if f == 0:
                return
            s.main[b] = f - 1


class Clock1:
    def __init__(s, cap):
        s.q = OrderedDict()
        s.cap = cap

    def has(s, b):
        return b in s.q

    def request(s, h, k):
        for b in h[:k]:
            s.q[b] = 1
        for b in h[k:]:
            if b in s.q:
                continue
            s.q[b] = 0
            while len(s.q) > s.cap:
                v, f = s.q.popitem(last=False)
                if f:
                    s.q[v] = 0


class Arc:
    def __init__(s, c):
        s.c = c
        s.p = 0
        s.t1, s.t2, s.b1, s.b2 = OrderedDict(), OrderedDict(), OrderedDict(), OrderedDict()

    def has(s, b):
        return b in s.t1 or b in s.t2

    def replace(s, in_b2):
        if s.t1 and (len(s.t1) > s.p or (in_b2 and len(s.t1) == s.p)):
            v, _ = s.t1.popitem(last=False)
            s.b1[v] = 1
        else:
            v, _ = s.t2.popitem(last=False)
            s.b2[v] = 1

    def access(s, x):
        if x in s.t1:
            del s.t1[x]
            s.t2[x] = 1
        elif x in s.t2:
            s.t2.move_to_end(x)
        elif x in s.b1:
            s.p = min(s.c, s.p + max(len(s.b2) / len(s.b1), 1))
            s.replace(False)
            del s.b1[x]
            s.t2[x] = 1
        elif x in s.b2:
            s.p = max(0, s.p - max(len(s.b1) / len(s.b2), 1))
            s.replace(True)
            del s.b2[x]
            s.t2[x] = 1
        else:
            if len(s.t1) + len(s.b1) == s.c:
                if len(s.t1) < s.c:
                    s.b1.popitem(last=False)
                    s.replace(False)
                else:
                    s.t1.popitem(last=False)
            elif len(s.t1) + len(s.t2) + len(s.b1) + len(s.b2) >= s.c:
                if len(s.t1) + len(s.t2) + len(s.b1) + len(s.b2) == 2 * s.c:
                    s.b2.popitem(last=False)
                s.replace(False)
            s.t1[x] = 1

    def request(s, h, k):
        for b in reversed(h[:k]):
            s.access(b)
        for b in h[k:]:
            if not s.has(b):
                s.access(b)


def belady(reqs, cap, nxt):
    """Belady's MIN with admission, on the same lookups (a block whose next use is never is not stored)."""
    import heapq
    cached, heap, hit, tot = {}, [], 0, 0
    for i, r in enumerate(reqs):
        h = r['hash_ids']
        tot += len(h)
        k = 0
        for b in h:
            if b in cached:
                k += 1
            else:
                break
        hit += k
        for j, b in enumerate(h):
            nu = nxt[i][j]
            if nu == INF:
                cached.pop(b, None)
                continue
            if b in cached or j >= k:  # a hit, or a block stored (or kept) from the first miss on
                cached[b] = nu
                heapq.heappush(heap, (-nu, b))
        while len(cached) > cap:
            nu, b = heapq.heappop(heap)
            if cached.get(b) == -nu:
                del cached[b]
    return 100.0 * hit / tot


def main():
    reqs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    unique = len({b for r in reqs for b in r['hash_ids']})
    nxt, last = [None] * len(reqs), {}
    for i in range(len(reqs) - 1, -1, -1):
        h = reqs[i]['hash_ids']
        nxt[i] = [last.get(b, INF) for b in h]
        for b in h:
            last[b] = i
    # Whether a request's new full blocks are read again later (all or nothing for 94% of them in the conversation
    # trace): what the hint tells.
    returns, later = [False] * len(reqs), set()
    for i in range(len(reqs) - 1, -1, -1):
        h = reqs[i]['hash_ids']
        full = h[:-1] if reqs[i]['input_length'] % 512 else h
        returns[i] = any(b in later for b in full[1:]) or (len(full) == 1 and full[0] in later)
        later.update(h)
    print('%d requests, %d unique blocks; %.1f%% of requests are followed by a read of their new blocks'
          % (len(reqs), unique, 100.0 * sum(returns) / len(reqs)))
    print('share   lru  s3fifo   arc clock1   min  hint100 hint90 hint80')
    for share in SHARES:
        c = max(1, int(unique * share))
        row = [run(reqs, Lru(c)), run(reqs, S3Fifo(c)), run(reqs, Arc(c)), run(reqs, Clock1(c)),
               belady(reqs, c, nxt)] + [run(reqs, Hint(c, returns, a)) for a in (1.0, 0.9, 0.8)]
        print('%5.1f%% ' % (100 * share) + ' '.join('%5.1f' % x for x in row), flush=True)


if __name__ == '__main__':
    sys.exit(main())
