package io.kvtier.jmh;

import io.kvtier.kvcache.KvCache;
import io.kvtier.server.command.CommandTable;
import io.kvtier.server.command.ServerContext;
import io.kvtier.server.command.Watches;
import io.kvtier.server.config.ClientLimits;
import io.kvtier.server.config.ServerOptions;
import io.kvtier.server.metrics.Metrics;
import io.kvtier.server.net.ConnectionHandler;
import io.kvtier.server.value.DiskReads;
import io.kvtier.store.KeyListener;
import io.kvtier.store.TieredStore;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The whole path of a small command on one connection, in-process: RESP decoding, dispatch (lookup, arity, key gate,
 * counters and latency), the KV-cache rules, the index and memory tier, reply encoding and the flush, through the
 * server's own {@link ConnectionHandler} on an {@link EmbeddedChannel} (no socket: what is left is the per-command
 * cost a server pays beyond the kernel's). Each invocation feeds a batch of {@value #PIPELINE} pipelined commands, as
 * {@code redis-benchmark -P 16} sends them, in one buffer, and drains what the handler wrote; the score is per command.
 *
 * <p>Commands: {@code set} (SET of a {@code valueBytes} value to one of 10,000 keys), {@code get} (GET of such a key,
 * present), {@code exists} (EXISTS of one key), {@code mget} (MGET of 10 keys; the score is per MGET) and {@code ping}
 * (PING, the floor: decode, dispatch, reply). Keys look like redis-benchmark's ({@code key:000000001234}).
 *
 * <p>Run, from the repository root (the launcher builds benchmarks.jar and runs it with a JDK 25):
 * <pre>{@code
 * ./kvtier jmh CommandPathBenchmark -prof gc
 * ./kvtier jmh CommandPathBenchmark -p command=get -p valueBytes=100 -prof jfr
 * }</pre>
 * Defaults: 1 fork, 3 warm-up and 5 measured iterations of 1 s ({@link KvtierBenchmark}).
 */
@State(Scope.Thread)
public class CommandPathBenchmark extends KvtierBenchmark {
    static final int PIPELINE = 16;
    private static final int KEYS = 10_000;

    @Param({"ping", "set", "get", "exists", "mget"})
    public String command;

    @Param({"100"})
    public int valueBytes;

    private Path dir;
    private TieredStore store;
    private KvCache kvcache;
    private DiskReads diskReads;
    private Metrics metrics;
    private EmbeddedChannel channel;
    /** Batches of PIPELINE commands over different keys, fed in turn. */
    private ByteBuf[] batches;
    private int next;
    /** The bytes of a batch's replies: the benchmark waits for all of them (a write may complete on another thread). */
    private int replyBytes;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("kvtier-jmh-path");
        ServerOptions options = new ServerOptions("127.0.0.1", 0, dir, 256L << 20, 64L << 20, 1L << 20, null, true, 0,
                100, 2, 1, 8L << 20, ServerOptions.DEFAULT_PIN_SHARE, 0, null, ClientLimits.defaults(), null, 0);
        kvcache = new KvCache();
        Watches watches = new Watches();
        store = TieredStore.open(options.storeOptions(), KeyListener.both(kvcache, watches));
        kvcache.attach(store, true);
        diskReads = new DiskReads(store, 2, 8L << 20);
        metrics = new Metrics();
        ServerContext context = new ServerContext(options, store, kvcache, diskReads, new CommandTable(), metrics,
                watches);
        channel = new EmbeddedChannel(new ConnectionHandler(context));
        String value = "x".repeat(valueBytes);
        String bulk = "$" + valueBytes + "\r\n" + value + "\r\n";
        replyBytes = PIPELINE * switch (command) {
            case "ping" -> "+PONG\r\n".length();
            case "set" -> "+OK\r\n".length();
            case "get" -> bulk.length();
            case "exists" -> ":1\r\n".length();
            case "mget" -> "*10\r\n".length() + 10 * bulk.length();
            default -> throw new IllegalArgumentException("unknown command " + command);
        };
        for (int start = 0; start < KEYS; start += PIPELINE) {
            StringBuilder fill = new StringBuilder();
            for (int i = start; i < start + PIPELINE; i++) {
                fill.append(resp("SET", key(i), value));
            }
            feed(fill.toString());
        }
        batches = new ByteBuf[KEYS / PIPELINE];
        for (int b = 0; b < batches.length; b++) {
            StringBuilder batch = new StringBuilder();
            for (int i = 0; i < PIPELINE; i++) {
                int k = b * PIPELINE + i;
                batch.append(switch (command) {
                    case "ping" -> resp("PING");
                    case "set" -> resp("SET", key(k), value);
                    case "get" -> resp("GET", key(k));
                    case "exists" -> resp("EXISTS", key(k));
                    case "mget" -> resp(mget(k));
                    default -> throw new IllegalArgumentException("unknown command " + command);
                });
            }
            byte[] bytes = batch.toString().getBytes(StandardCharsets.US_ASCII);
            batches[b] = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
        }
    }

    /** Feeds one batch of {@value #PIPELINE} commands; returns the bytes written back. */
    @Benchmark
    @OperationsPerInvocation(PIPELINE)
    public int batch() {
        ByteBuf in = batches[next];
        next = next + 1 == batches.length ? 0 : next + 1;
        channel.writeInbound(in.retainedDuplicate());
        int got = drain();
        for (long spins = 0; got < replyBytes; spins++) {
            if (spins > 100_000_000L) {
                throw new IllegalStateException("got " + got + " reply bytes of " + replyBytes);
            }
            Thread.onSpinWait();
            got += drain();
        }
        if (got != replyBytes) {
            throw new IllegalStateException("got " + got + " reply bytes, expected " + replyBytes);
        }
        return got;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        channel.finishAndReleaseAll();
        for (ByteBuf b : batches) {
            b.release();
        }
        metrics.close();
        diskReads.close();
        store.close();
        kvcache.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private int drain() {
        channel.runPendingTasks();
        int bytes = 0;
        for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
            bytes += b.readableBytes();
            b.release();
        }
        return bytes;
    }

    private void feed(String commands) {
        byte[] bytes = commands.getBytes(StandardCharsets.US_ASCII);
        channel.writeInbound(PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes));
        if (drain() == 0) {
            throw new UncheckedIOException(new IOException("the handler answered nothing"));
        }
    }

    static String key(int i) {
        return String.format("key:%012d", i);
    }

    private static String[] mget(int first) {
        String[] args = new String[11];
        args[0] = "MGET";
        for (int i = 0; i < 10; i++) {
            args[i + 1] = key((first * 7 + i * 997) % KEYS);
        }
        return args;
    }

    static String resp(String... args) {
        StringBuilder b = new StringBuilder("*").append(args.length).append("\r\n");
        for (String a : args) {
            b.append('$').append(a.length()).append("\r\n").append(a).append("\r\n");
        }
        return b.toString();
    }
}
