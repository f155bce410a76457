package io.kvtier.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The run settings every kvtier benchmark shares, inherited by JMH: average time per operation in nanoseconds, one
 * fork with {@link BenchmarkJvm}'s flags, 3 warm-up and 5 measured iterations of 1 s. Command-line options override
 * them.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {BenchmarkJvm.DIRECT_MEMORY, BenchmarkJvm.NATIVE_ACCESS,
        BenchmarkJvm.UNSAFE_MEMORY_ACCESS, BenchmarkJvm.NETTY_REFLECTION})
abstract class KvtierBenchmark {
}
