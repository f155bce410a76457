package io.kvtier.it.mini;

import io.kvtier.client.cluster.SlotHash;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.SafeEncoder;

/** Helpers for MiniCluster tests: the cluster's owners of a key, node counters, and per-key write probes. */
final class Probes {
    private Probes() {
    }

    /** Every slot's owners (primary first) as node ids, from {@code node}'s KVT.SLOTS. */
    static List<String>[] owners(MiniCluster c, MiniCluster.Node node) {
        @SuppressWarnings("unchecked")
        List<String>[] out = new List[SlotHash.SLOTS];
        try (Jedis j = node.jedis()) {
            Object reply = j.sendCommand(() -> SafeEncoder.encode("KVT.SLOTS"));
            for (Object range : (List<?>) reply) {
                List<?> r = (List<?>) range;
                int start = ((Long) r.get(0)).intValue();
                int end = ((Long) r.get(1)).intValue();
                List<String> ids = new ArrayList<>();
                for (int i = 2; i < r.size(); i++) {
                    List<?> owner = (List<?>) r.get(i);
                    int port = ((Long) owner.get(1)).intValue();
                    ids.add(c.nodes().stream().filter(n -> n.respPort == port).findFirst().orElseThrow().id);
                }
                for (int s = start; s <= end; s++) {
                    out[s] = ids;
                }
            }
        }
        return out;
    }

    /** A node's KVT.STATUS field as a long. */
    static long stat(MiniCluster.Node node, String field) {
        return Long.parseLong(MiniCluster.status(node).get(field));
    }

    /** Keys (one per slot tried) whose owners are exactly among {@code ids}, none of them {@code avoid}. */
    static List<String> keysOwnedOnlyBy(List<String>[] owners, String avoid, int count) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < count && i < 1_000_000; i++) {
            String k = "probe-" + i;
            List<String> o = owners[SlotHash.slot(k.getBytes())];
            if (o != null && !o.contains(avoid)) {
                keys.add(k);
            }
        }
        return keys;
    }

    /**
     * Writes each of {@code keys} in a loop, a thread and connection per key (to {@code via}), and records the longest
     * time any key went without an acknowledged write while it ran.
     */
    static final class WriteProbe implements AutoCloseable {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<Thread> threads = new ArrayList<>();
        private final Map<String, AtomicLong> longestGapNanos = new HashMap<>();
        private final AtomicLong writes = new AtomicLong();
        private final AtomicLong failures = new AtomicLong();
        private final Map<String, Integer> errors = new java.util.concurrent.ConcurrentHashMap<>();

        WriteProbe(MiniCluster.Node via, List<String> keys) {
            for (String key : keys) {
                AtomicLong gap = new AtomicLong();
                longestGapNanos.put(key, gap);
                threads.add(Thread.ofPlatform().daemon().start(() -> {
                    long lastOk = System.nanoTime();
                    Jedis j = null;
                    long n = 0;
                    while (running.get()) {
                        try {
                            if (j == null) {
                                j = via.jedis();
                            }
                            j.set(key, "v" + n++);
                            long now = System.nanoTime();
                            gap.accumulateAndGet(now - lastOk, Math::max);
                            lastOk = now;
                            writes.incrementAndGet();
                        } catch (RuntimeException e) {
                            failures.incrementAndGet();
                            errors.merge(String.valueOf(e.getMessage()).replaceAll("[0-9]+", "N"), 1, Integer::sum);
                            if (j != null) {
                                j.close();
                                j = null;
                            }
                            try {
                                Thread.sleep(5);
                            } catch (InterruptedException ie) {
                                return;
                            }
                        }
                    }
                    if (j != null) {
                        j.close();
                    }
                }));
            }
        }

        /** Forgets the gaps so far (the measurement starts now). */
        void reset() {
            longestGapNanos.values().forEach(g -> g.set(0));
            failures.set(0);
            errors.clear();
        }

        long longestGapMillis() {
            return longestGapNanos.values().stream().mapToLong(AtomicLong::get).max().orElse(0) / 1_000_000;
        }

        long writes() {
            return writes.get();
        }

        long failures() {
            return failures.get();
        }

        /** The failures' messages (digits as N) and how often each came. */
        Map<String, Integer> errors() {
            return errors;
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            for (Thread t : threads) {
                t.join(5_000);
            }
        }
    }
}
