package io.kvtier.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Writers and readers through cluster-unaware Jedis connections (the nodes proxy), checking every byte. Each key has
 * one writer thread, so the values a read may return are known exactly: the last acknowledged version, or one whose
 * write failed after it (a failed write may or may not have been applied). Anything else is a wrong read; an
 * acknowledged version that is gone is a lost write. Every call's duration is recorded.
 */
final class LoadGenerator implements AutoCloseable {
    static final int KEYS_PER_THREAD = 150;

    /** Per key: the acknowledged version (-1: none) and versions written since without acknowledgement. */
    static final class KeyState {
        volatile long acked = -1;
        final Set<Long> uncertain = java.util.concurrent.ConcurrentHashMap.newKeySet();
    }

    private final Supplier<List<KvtierProcess>> targets;
    private final KeyState[][] keys;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    final AtomicLong writes = new AtomicLong();
    final AtomicLong reads = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong wrongReads = new AtomicLong();
    final AtomicLong failedReads = new AtomicLong();
    final AtomicLong maxCallMillis = new AtomicLong();
    final List<String> wrong = java.util.Collections.synchronizedList(new ArrayList<>());
    /** ops and errors per 100 ms bucket since start, for timelines. */
    final long startNanos = System.nanoTime();
    final AtomicLong[] opsTimeline = new AtomicLong[6000];
    final AtomicLong[] errorsTimeline = new AtomicLong[6000];
    private final boolean writing;

    LoadGenerator(Supplier<List<KvtierProcess>> targets, int threads, boolean writing) {
        this.targets = targets;
        this.writing = writing;
        this.keys = new KeyState[threads][KEYS_PER_THREAD];
        for (int t = 0; t < threads; t++) {
            for (int k = 0; k < KEYS_PER_THREAD; k++) {
                keys[t][k] = new KeyState();
            }
        }
        for (int i = 0; i < opsTimeline.length; i++) {
            opsTimeline[i] = new AtomicLong();
            errorsTimeline[i] = new AtomicLong();
        }
        for (int t = 0; t < threads; t++) {
            int id = t;
            this.threads.add(Thread.ofPlatform().name("load-" + t).start(() -> run(id)));
        }
    }

    private static final AtomicLong GENERATORS = new AtomicLong();
    /** Keys of different generators never collide. */
    private final long generator = GENERATORS.incrementAndGet();

    String key(int thread, int k) {
        return "load" + generator + ":" + thread + ":" + k;
    }

    /** The value of version {@code v} of a key: its name and version, padded to 1..32 KiB by the version. */
    static byte[] value(String key, long v) {
        String head = key + "#" + v + "#";
        int size = 1024 + (int) (Math.floorMod(v * 7919, 32) * 1024);
        byte[] out = new byte[size];
        byte[] h = head.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(h, 0, out, 0, h.length);
        for (int i = h.length; i < size; i++) {
            out[i] = (byte) ('a' + (i + v) % 26);
        }
        return out;
    }

    /** The version a value says it is, or -2 if it is no value of this key. */
    static long versionOf(String key, byte[] value) {
        String s = new String(value, 0, Math.min(value.length, 128), StandardCharsets.UTF_8);
        if (!s.startsWith(key + "#")) {
            return -2;
        }
        long v = Long.parseLong(s.substring(key.length() + 1, s.indexOf('#', key.length() + 1)));
        return Arrays.equals(value, value(key, v)) ? v : -2;
    }

    private void run(int id) {
        long version = 0;
        Jedis jedis = null;
        String through = "";
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        while (running.get()) {
            int k = rnd.nextInt(KEYS_PER_THREAD);
            String key = key(id, k);
            KeyState st = keys[id][k];
            boolean write = writing && (st.acked < 0 || rnd.nextInt(3) == 0);
            long started = System.nanoTime();
            try {
                if (jedis == null) {
                    List<KvtierProcess> live = targets.get();
                    KvtierProcess target = live.get(Math.floorMod(id + rnd.nextInt(live.size()), live.size()));
                    jedis = target.jedis(10_000);
                    through = target.host() + ":" + target.port();
                }
                if (write) {
                    long v = ++version;
                    st.uncertain.add(v);
                    String ok = jedis.set(key.getBytes(StandardCharsets.UTF_8), value(key, v));
                    if ("OK".equals(ok)) {
                        st.acked = v;
                        st.uncertain.clear();
                        writes.incrementAndGet();
                    }
                } else if (st.acked >= 0) {
                    byte[] got = jedis.get(key.getBytes(StandardCharsets.UTF_8));
                    reads.incrementAndGet();
                    if (!check(key, st, got, through, started) && wrong.size() < 20) {
                        // Transient or lasting? Read it again, as another client would.
                        List<String> again = new ArrayList<>();
                        for (int i = 0; i < 3; i++) {
                            sleep(50);
                            byte[] then = jedis.get(key.getBytes(StandardCharsets.UTF_8));
                            again.add(then == null ? "nil" : Long.toString(versionOf(key, then)));
                        }
                        wrong.add(key + ": read again 50 ms apart: " + again);
                    }
                }
                bucket(opsTimeline, started);
            } catch (JedisDataException e) {
                errors.incrementAndGet();
                bucket(errorsTimeline, started);
                if (!write) {
                    failedReads.incrementAndGet();
                    note(key + ": read failed: " + e.getMessage());
                }
            } catch (JedisConnectionException e) {
                errors.incrementAndGet();
                bucket(errorsTimeline, started);
                if (!write) {
                    failedReads.incrementAndGet();
                    note(key + ": read failed: " + e.getMessage());
                }
                if (jedis != null) { // null when connecting itself failed
                    jedis.close();
                }
                jedis = null;
                sleep(20);
            } finally {
                maxCallMillis.accumulateAndGet((System.nanoTime() - started) / 1_000_000, Math::max);
            }
        }
        if (jedis != null) {
            jedis.close();
        }
    }

    /** Failed reads, the first 20. */
    final List<String> readFailures = java.util.Collections.synchronizedList(new ArrayList<>());

    private void note(String failure) {
        if (readFailures.size() < 20) {
            // The wall-clock time (UTC, as the nodes log) to find the failure in the nodes' logs.
            readFailures.add(java.time.LocalTime.now(java.time.ZoneOffset.UTC) + " " + failure);
        }
    }

    /** Whether {@code got} is a value the key may have now; records it as wrong otherwise. */
    private boolean check(String key, KeyState st, byte[] got, String through, long started) {
        long acked = st.acked;
        long v = got == null ? -1 : versionOf(key, got);
        if (v == acked || st.uncertain.contains(v)) {
            return true;
        }
        wrongReads.incrementAndGet();
        if (wrong.size() < 20) {
            wrong.add(key + ": read " + (got == null ? "nil" : v == -2 ? "corrupt bytes" : "version " + v)
                    + ", acknowledged " + acked + ", unacknowledged " + st.uncertain + " (through " + through + ", "
                    + java.time.Instant.now().minusNanos(System.nanoTime() - started) + ")");
        }
        return false;
    }

    private void bucket(AtomicLong[] timeline, long started) {
        int b = (int) ((started - startNanos) / 100_000_000L);
        if (b >= 0 && b < timeline.length) {
            timeline[b].incrementAndGet();
        }
    }

    /** Stops the threads and waits for them. */
    @Override
    public void close() throws InterruptedException {
        running.set(false);
        for (Thread t : threads) {
            t.join(30_000);
        }
    }

    /**
     * Reads every key through {@code node} and returns the problems: acknowledged versions missing (lost) or values
     * that were never written. Call after {@link #close}.
     */
    List<String> verifyAll(KvtierProcess node) {
        List<String> problems = new ArrayList<>();
        try (Jedis j = node.jedis(10_000)) {
            for (int t = 0; t < keys.length; t++) {
                for (int k = 0; k < KEYS_PER_THREAD; k++) {
                    KeyState st = keys[t][k];
                    if (st.acked < 0 && st.uncertain.isEmpty()) {
                        continue;
                    }
                    String key = key(t, k);
                    byte[] got = j.get(key.getBytes(StandardCharsets.UTF_8));
                    long v = got == null ? -1 : versionOf(key, got);
                    if (v != st.acked && !st.uncertain.contains(v)) {
                        problems.add(key + ": " + (got == null ? "nil" : "version " + v) + ", acknowledged "
                                + st.acked + ", unacknowledged " + st.uncertain);
                    }
                }
            }
        }
        return problems;
    }

    /**
     * Milliseconds from {@code sinceNanos} until every key acknowledged by then has been read back through
     * {@code node} as some version of itself, or -1 if that takes over {@code timeoutMillis}: the latest, over the
     * keys, of the end of a key's first successful read. The keys are read {@link #KEYS_PER_PROBE} to a connection,
     * one read at a time, on as many connections at once: a node runs one connection's commands in order, and a read
     * of a key whose primary just died may take the peer timeout before it answers TRYAGAIN, so a key queued behind
     * many such reads (8 pipelined connections before: 0.3-0.6 s added to each figure) would time that queue rather
     * than its own readability. It runs while the load goes on, so it checks only that a key is readable; which
     * version is right is the load's and {@link #verifyAll}'s job.
     */
    long readableAfter(KvtierProcess node, long sinceNanos, long timeoutMillis) {
        List<List<String>> shares = new ArrayList<>();
        for (int t = 0; t < keys.length; t++) {
            for (int k = 0; k < KEYS_PER_THREAD; k++) {
                if (keys[t][k].acked >= 0) {
                    if (shares.isEmpty() || shares.getLast().size() == KEYS_PER_PROBE) {
                        shares.add(new ArrayList<>());
                    }
                    shares.getLast().add(key(t, k));
                }
            }
        }
        long deadline = sinceNanos + timeoutMillis * 1_000_000;
        try (var executor = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            List<java.util.concurrent.Future<Long>> probes = shares.stream()
                    .map(share -> executor.submit(() -> readAll(node, share, sinceNanos, deadline))).toList();
            long last = 0;
            for (var probe : probes) {
                long took = probe.get();
                if (took < 0) {
                    return -1;
                }
                last = Math.max(last, took);
            }
            return last;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Keys one {@link #readableAfter} connection reads. */
    static final int KEYS_PER_PROBE = 2;

    /** The latest of {@code keys}' first successful reads, in ms since {@code sinceNanos}; -1 past the deadline. */
    private static long readAll(KvtierProcess node, List<String> keys, long sinceNanos, long deadline) {
        List<String> pending = new ArrayList<>(keys);
        long last = 0;
        while (System.nanoTime() < deadline) {
            try (Jedis j = node.jedis(5_000)) {
                while (!pending.isEmpty() && System.nanoTime() < deadline) {
                    for (java.util.Iterator<String> it = pending.iterator(); it.hasNext(); ) {
                        if (readable(it.next(), j)) {
                            it.remove();
                            last = Math.max(last, (System.nanoTime() - sinceNanos) / 1_000_000);
                        }
                    }
                    if (!pending.isEmpty()) {
                        sleep(20);
                    }
                }
                if (pending.isEmpty()) {
                    return last;
                }
            } catch (JedisConnectionException e) {
                // the node is busy or the connection was cut; try again
                sleep(20);
            }
        }
        return -1;
    }

    private static boolean readable(String key, Jedis j) {
        try {
            byte[] got = j.get(key.getBytes(StandardCharsets.UTF_8));
            return got != null && versionOf(key, got) >= 0;
        } catch (JedisDataException e) {
            return false;
        }
    }

    int writtenKeys() {
        int n = 0;
        for (KeyState[] row : keys) {
            for (KeyState st : row) {
                n += st.acked >= 0 ? 1 : 0;
            }
        }
        return n;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
