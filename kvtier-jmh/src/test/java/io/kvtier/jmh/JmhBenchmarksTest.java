package io.kvtier.jmh;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.resp.BulkSink;
import io.kvtier.resp.RespCommand;
import io.kvtier.store.memory.MemoryValue;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Runs each benchmark's set-up, methods and tear-down a few times without timing anything, and checks that they
 * measure what their Javadoc claims: right commands decoded, values of the right size reserved and freed, hits that
 * hit the right value and misses that miss. A benchmark that silently measured a failure path would pass JMH.
 */
class JmhBenchmarksTest {
    private static final int INVOCATIONS = 3;

    /** JMH's documented way to make a Blackhole outside a benchmark run. */
    private final Blackhole blackhole = new Blackhole(
            "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");

    @Test
    void respDecoderBenchmarkDecodesTheWholeBatchOnEveryInvocation() {
        RespDecoderBenchmark bench = new RespDecoderBenchmark();
        bench.setUp();
        try {
            for (int i = 0; i < INVOCATIONS; i++) {
                assertThat(bench.pipelinedSets(blackhole)).isEqualTo(RespDecoderBenchmark.BATCH);
                assertThat(bench.sets.isReadable()).isFalse();
                assertThat(bench.pipelinedGets(blackhole)).isEqualTo(RespDecoderBenchmark.BATCH);
                assertThat(bench.gets.isReadable()).isFalse();
            }
        } finally {
            bench.tearDown();
        }
    }

    @Test
    void respDecoderBenchmarkInputsAreTheCommandsItClaims() {
        RespDecoderBenchmark bench = new RespDecoderBenchmark();
        bench.setUp();
        try {
            for (int i = 0; i < RespDecoderBenchmark.BATCH; i++) {
                assertThat(args(bench.decoder.decode(bench.sets))).containsExactly(
                        "SET", "key:" + i, new String(RespDecoderBenchmark.smallValue(i), US_ASCII));
                assertThat(args(bench.decoder.decode(bench.gets))).containsExactly("GET", "key:" + i);
            }
            assertThat(bench.decoder.decode(bench.sets)).isNull();
            assertThat(bench.decoder.decode(bench.gets)).isNull();
            assertThat(RespDecoderBenchmark.smallValue(0)).hasSize(RespDecoderBenchmark.SMALL_VALUE);
        } finally {
            bench.tearDown();
        }
    }

    @Test
    void respDecoderBenchmarkStreamsTheLargeValueIntoTheSink() {
        RespDecoderBenchmark bench = new RespDecoderBenchmark();
        bench.setUp();
        try {
            for (int i = 0; i < INVOCATIONS; i++) {
                BulkSink value = bench.largeSet();

                assertThat(value).isSameAs(bench.sink);
                assertThat(value.length()).isEqualTo(RespDecoderBenchmark.LARGE_VALUE);
                assertThat(value.toBytes()).isEqualTo(RespDecoderBenchmark.largeValue());
                assertThat(bench.largeSet.isReadable()).isFalse();
            }
        } finally {
            bench.tearDown();
        }
    }

    @Test
    void memoryTierBenchmarkReservesValuesOfTheRightSizeAndFreesThem() {
        for (int size : new int[] {4096, 1 << 20}) {
            MemoryTierBenchmark bench = new MemoryTierBenchmark();
            bench.valueBytes = size;
            bench.setUp();
            long residentOnly = bench.tier.usedBytes();
            try {
                for (int i = 0; i < INVOCATIONS; i++) {
                    MemoryValue bare = bench.allocateAndFree();
                    assertThat(bare).isNotNull();
                    assertThat(bare.length()).isEqualTo(size);
                    assertThat(bench.tier.usedBytes()).as("used after a %d-byte pair", size).isEqualTo(residentOnly);

                    MemoryValue filled = bench.allocateFillAndFree();
                    assertThat(filled.length()).isEqualTo(size);
                    assertThat(filled.written()).isEqualTo(size);
                    assertThat(bench.tier.usedBytes()).isEqualTo(residentOnly);
                }
                assertThat(bench.tier.valueBytes()).as("only the resident value is live").isEqualTo(size);
            } finally {
                bench.tearDown();
            }
            assertThat(bench.tier.usedBytes()).isZero();
        }
    }

    @Test
    void indexBenchmarkHitsTheRightValuesAndMissesMissingKeys() throws IOException {
        IndexBenchmark bench = new IndexBenchmark();
        bench.setUp();
        IndexBenchmark.KeyOrder order = new IndexBenchmark.KeyOrder();
        order.setUp();
        try {
            assertThat(bench.store.size()).isEqualTo(IndexBenchmark.KEYS);
            for (int i = 0; i < INVOCATIONS; i++) {
                int key = order.order[order.at];
                // The reference is closed, but the store's own keeps the value: nothing overwrites or demotes it here.
                assertThat(bench.getHit(order).toArray()).as("value of key:%d", key)
                        .isEqualTo(IndexBenchmark.value(key));
                assertThat(bench.getMiss(order)).isNull();
                assertThat(bench.exists(order)).isTrue();
            }
            assertThat(bench.store.stats().memoryUsedBytes()).isPositive();
        } finally {
            bench.tearDown();
        }
        assertThat(Files.exists(bench.dir)).as("temporary directory deleted").isFalse();
    }

    private static List<String> args(RespCommand command) {
        List<String> args = new ArrayList<>();
        for (int i = 0; i < command.argCount(); i++) {
            args.add(new String(command.bytes(i), US_ASCII));
        }
        command.release();
        return args;
    }
}
