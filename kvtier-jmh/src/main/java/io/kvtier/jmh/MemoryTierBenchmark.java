package io.kvtier.jmh;

import io.kvtier.store.memory.MemoryTier;
import io.kvtier.store.memory.MemoryValue;
import java.nio.ByteBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Time for {@link MemoryTier} to reserve one value and give it back ({@code allocate}, then {@code release} of its
 * only reference), bare and with the value filled in between: 4 KiB values take a chunk of a size-class page, 1 MiB
 * values take 16 whole 64 KiB pages. Every SET reserves its value this way (a large one before its first payload byte
 * is read), under the tier's single lock: this is both per-write latency and a critical section all writers share.
 *
 * <p>One value of the measured size stays allocated for the whole run, so its size-class page is in use as in a
 * running server: a 4 KiB pair then takes and returns a chunk, instead of creating and dropping a page each time.
 *
 * <p>Run, from the repository root (the launcher finds a JDK 25, builds benchmarks.jar and runs it):
 * <pre>{@code
 * ./kvtier jmh MemoryTierBenchmark
 * }</pre>
 * The launcher builds benchmarks.jar and runs it with a JDK 25; the forks' JVM flags come from
 * {@link BenchmarkJvm} (through {@link KvtierBenchmark}). Defaults: 1 fork, 3 warm-up and 5 measured iterations of 1 s; JMH options ({@code -f 1 -wi 3 -i 5},
 * {@code -p valueBytes=4096}, {@code -prof gc}) go after the class name.
 */
@State(Scope.Thread)
public class MemoryTierBenchmark extends KvtierBenchmark {
    /** One 64 MiB slab: room for the resident value and the measured one at either size. */
    static final long BUDGET = 64L << 20;

    @Param({"4096", "1048576"})
    public int valueBytes;

    MemoryTier tier;
    MemoryValue resident;
    /** The bytes a fill copies in: direct, as a payload read from a socket is. */
    ByteBuffer payload;

    @Setup
    public void setUp() {
        tier = new MemoryTier(BUDGET);
        resident = tier.allocate(valueBytes);
        payload = ByteBuffer.allocateDirect(valueBytes);
        for (int i = 0; i < valueBytes; i++) {
            payload.put(i, (byte) (i * 31 + 7));
        }
    }

    @TearDown
    public void tearDown() {
        resident.release();
        tier.close();
    }

    /** Reserves a value and frees it; returns the (freed) value. */
    @Benchmark
    public MemoryValue allocateAndFree() {
        MemoryValue value = tier.allocate(valueBytes);
        value.release();
        return value;
    }

    /** Reserves a value, copies the payload into it and frees it; returns the (freed) value. */
    @Benchmark
    public MemoryValue allocateFillAndFree() {
        MemoryValue value = tier.allocate(valueBytes);
        value.write(payload.clear());
        value.release();
        return value;
    }
}
