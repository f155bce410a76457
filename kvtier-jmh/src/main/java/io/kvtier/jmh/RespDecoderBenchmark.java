package io.kvtier.jmh;

import static java.nio.charset.StandardCharsets.US_ASCII;

import io.kvtier.resp.BulkSink;
import io.kvtier.resp.RespCommand;
import io.kvtier.resp.RespDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Time to decode one RESP command with {@link RespDecoder}: a pipelined batch of 64 small {@code SET key:<n>
 * <64-byte value>} or {@code GET key:<n>} commands (reported per command), and one {@code SET} of 1 MiB whose payload
 * streams into a {@link BulkSink}. Every request passes through the decoder on an event loop before anything else
 * runs, so its cost per command bounds the small-request rate of a connection, and the large SET shows what framing
 * adds to the one copy of the payload.
 *
 * <p>Run, from the repository root (the launcher finds a JDK 25, builds benchmarks.jar and runs it):
 * <pre>{@code
 * ./kvtier jmh RespDecoderBenchmark
 * }</pre>
 * The forks' JVM flags come from {@link BenchmarkJvm} (through {@link KvtierBenchmark}). Defaults: 1 fork, 3 warm-up
 * and 5 measured iterations of 1 s; JMH options ({@code -f 1 -wi 3 -i 5}, {@code -prof gc}) go after the class
 * name.
 */
@State(Scope.Thread)
public class RespDecoderBenchmark extends KvtierBenchmark {
    static final int BATCH = 64;
    static final int SMALL_VALUE = 64;
    static final int LARGE_VALUE = 1 << 20;
    /** The server's default {@code --max-value}; with it, payloads from 16 KiB on go to sinks, as in the server. */
    private static final long MAX_VALUE = 512L << 20;

    final ReusedSink sink = new ReusedSink(LARGE_VALUE);
    RespDecoder decoder;
    /** Inputs, encoded once; each invocation rewinds the reader index instead of allocating. */
    ByteBuf sets;
    ByteBuf gets;
    ByteBuf largeSet;

    @Setup
    public void setUp() {
        decoder = new RespDecoder(RespDecoder.Limits.defaults(MAX_VALUE), (argIndex, length) -> sink.rewind(length));
        sets = Unpooled.directBuffer();
        gets = Unpooled.directBuffer();
        for (int i = 0; i < BATCH; i++) {
            encode(sets, ascii("SET"), key(i), smallValue(i));
            encode(gets, ascii("GET"), key(i));
        }
        largeSet = encode(Unpooled.directBuffer(LARGE_VALUE + 64), ascii("SET"), key(0), largeValue());
    }

    @TearDown
    public void tearDown() {
        decoder.close();
        sets.release();
        gets.release();
        largeSet.release();
        sink.close();
    }

    /** Decodes 64 pipelined SETs of 64-byte values; returns how many commands came out. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int pipelinedSets(Blackhole blackhole) {
        return decodeAll(sets, blackhole);
    }

    /** Decodes 64 pipelined GETs; returns how many commands came out. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int pipelinedGets(Blackhole blackhole) {
        return decodeAll(gets, blackhole);
    }

    /** Decodes one SET whose 1 MiB value streams into the sink, which it takes as SET does; returns that sink. */
    @Benchmark
    public BulkSink largeSet() {
        largeSet.readerIndex(0);
        RespCommand command = decoder.decode(largeSet);
        BulkSink value = command.takeSink(2);
        command.release();
        return value;
    }

    private int decodeAll(ByteBuf in, Blackhole blackhole) {
        in.readerIndex(0);
        int decoded = 0;
        for (RespCommand command; (command = decoder.decode(in)) != null; decoded++) {
            blackhole.consume(command);
            command.release();
        }
        return decoded;
    }

    static byte[] key(int i) {
        return ascii("key:" + i);
    }

    /** A 64-byte value that differs per key, so a mixed-up argument shows in a test. */
    static byte[] smallValue(int i) {
        byte[] value = new byte[SMALL_VALUE];
        for (int j = 0; j < value.length; j++) {
            value[j] = (byte) ('a' + (i + j) % 26);
        }
        return value;
    }

    static byte[] largeValue() {
        byte[] value = new byte[LARGE_VALUE];
        for (int j = 0; j < value.length; j++) {
            value[j] = (byte) (j * 31 + 7);
        }
        return value;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(US_ASCII);
    }

    /** Appends {@code args} as a RESP multibulk command, as a client sends it. */
    private static ByteBuf encode(ByteBuf out, byte[]... args) {
        out.writeBytes(ascii("*" + args.length + "\r\n"));
        for (byte[] arg : args) {
            out.writeBytes(ascii("$" + arg.length + "\r\n")).writeBytes(arg).writeBytes(ascii("\r\n"));
        }
        return out;
    }

    /**
     * The one sink the decoder ever has open (a command here has at most one large argument): it copies the payload
     * into a direct buffer allocated once, rewound each time the decoder asks for a sink.
     */
    static final class ReusedSink implements BulkSink, AutoCloseable {
        private final ByteBuf target;
        private long length;

        ReusedSink(int capacity) {
            this.target = Unpooled.directBuffer(capacity, capacity);
        }

        ReusedSink rewind(long payloadLength) {
            target.clear();
            length = payloadLength;
            return this;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public void write(ByteBuf src, int n) {
            target.writeBytes(src, n);
        }

        @Override
        public byte[] toBytes() {
            byte[] bytes = new byte[target.readableBytes()];
            target.getBytes(target.readerIndex(), bytes);
            return bytes;
        }

        @Override
        public void abort() {
            target.clear();
        }

        @Override
        public void close() {
            target.release();
        }
    }
}
