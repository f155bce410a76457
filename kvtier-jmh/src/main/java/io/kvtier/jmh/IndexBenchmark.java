package io.kvtier.jmh;

import io.kvtier.store.PutOptions;
import io.kvtier.store.StoreOptions;
import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import io.kvtier.store.memory.MemoryValue;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Time for one lookup in {@link TieredStore}'s index, holding 100,000 keys of 64-byte values, all in memory: a
 * {@code get} that hits a random key (taking and closing a {@link ValueRef}), a {@code get} that misses, and an
 * {@code exists}. Every read command starts with such a lookup, and for a small value it is all the store does for a
 * GET: the rest of the command's cost is decoding it and writing the reply.
 *
 * <p>Run, from the repository root (the launcher finds a JDK 25, builds benchmarks.jar and runs it):
 * <pre>{@code
 * ./kvtier jmh IndexBenchmark
 * }</pre>
 * The forks' JVM flags come from {@link BenchmarkJvm} (through {@link KvtierBenchmark}). Defaults: 1 fork, 3 warm-up
 * and 5 measured iterations of 1 s; JMH options ({@code -f 1 -wi 3 -i 5}, {@code -prof gc}) go after the class
 * name.
 *
 * <p>Setting up writes the keys into a store in a temporary directory; tearing down closes it (which writes every
 * value to disk, a second or so) and deletes the directory.
 */
@State(Scope.Benchmark)
public class IndexBenchmark extends KvtierBenchmark {
    static final int KEYS = 100_000;
    static final int VALUE_BYTES = 64;
    /** The values take about 6.3 MiB, far from the demotion watermark (1/8 of the budget free): none leaves memory. */
    private static final long MEMORY = 64L << 20;
    /** Room for the shutdown that writes every value to disk in tear-down. */
    private static final long DISK = 64L << 20;
    private static final long MAX_VALUE = 1L << 20;
    private static final long MEMORY_WAIT_MILLIS = 10_000;

    Path dir;
    TieredStore store;
    byte[][] keys;
    byte[][] missingKeys;

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("kvtier-jmh-index");
        store = TieredStore.open(new StoreOptions(dir, MEMORY, DISK, MAX_VALUE, MEMORY_WAIT_MILLIS, 0));
        keys = new byte[KEYS][];
        missingKeys = new byte[KEYS][];
        for (int i = 0; i < KEYS; i++) {
            keys[i] = ascii("key:" + i);
            missingKeys[i] = ascii("missing:" + i);
            MemoryValue value = store.allocate(VALUE_BYTES).join();
            value.write(value(i));
            store.put(keys[i], value, PutOptions.PLAIN).join();
        }
    }

    @TearDown
    public void tearDown() throws IOException {
        store.close();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** Looks up an existing key and releases the reference; returns its value (still held by the store). */
    @Benchmark
    public MemoryValue getHit(KeyOrder order) {
        try (ValueRef ref = store.get(keys[order.next()])) {
            return ref.memory();
        }
    }

    /** Looks up a key that was never written; returns what {@code get} gave, null. */
    @Benchmark
    public ValueRef getMiss(KeyOrder order) {
        try (ValueRef ref = store.get(missingKeys[order.next()])) {
            return ref;
        }
    }

    /** Checks that an existing key exists. */
    @Benchmark
    public boolean exists(KeyOrder order) {
        return store.exists(keys[order.next()]);
    }

    /** The value of key {@code i}: 64 bytes that differ per key, so a wrong hit shows in a test. */
    static byte[] value(int i) {
        byte[] value = new byte[VALUE_BYTES];
        for (int j = 0; j < value.length; j++) {
            value[j] = (byte) (i * 131 + j);
        }
        return value;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * A thread's random walk over the key indexes: picking the next key costs an array read, no random number
     * generation inside the measurement. Not thread-safe: one per benchmark thread.
     */
    @State(Scope.Thread)
    public static class KeyOrder {
        static final int LENGTH = 1 << 16;

        final int[] order = new int[LENGTH];
        int at;

        @Setup
        public void setUp() {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (int i = 0; i < LENGTH; i++) {
                order[i] = random.nextInt(KEYS);
            }
        }

        int next() {
            int index = order[at];
            at = (at + 1) & (LENGTH - 1);
            return index;
        }
    }
}
