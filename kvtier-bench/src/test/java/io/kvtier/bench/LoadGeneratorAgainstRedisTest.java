package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.bench.load.Connections;
import io.kvtier.bench.load.Limit;
import io.kvtier.bench.load.LoadGenerator;
import io.kvtier.bench.load.Payloads;
import io.kvtier.bench.load.Phase;
import io.kvtier.bench.load.PhaseOutcome;
import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.BenchResultJson;
import io.kvtier.bench.report.OpResult;
import io.kvtier.bench.report.ProgressListener;
import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.run.BenchRun;
import io.kvtier.bench.workload.LmcacheSpec;
import io.kvtier.bench.workload.OverflowSpec;
import io.kvtier.bench.workload.SetGetSpec;
import io.kvtier.client.ClientOptions;
import io.kvtier.client.Reply;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The load generator against a real redis-server (Debian's 7.0, from PATH) on a free port: every workload with tiny
 * values and verification on must see no errors and no wrong bytes. Needs {@code redis-server} on PATH.
 */
class LoadGeneratorAgainstRedisTest {
    private static Process redis;
    private static int port;

    @TempDir
    Path out;

    @BeforeAll
    static void startRedis() throws Exception {
        port = io.kvtier.testkit.RedisServerProcess.freePort();
        redis = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!answersPing()) {
            if (System.nanoTime() > deadline || !redis.isAlive()) {
                throw new IllegalStateException("redis-server did not start on port " + port);
            }
            Thread.sleep(50);
        }
    }

    private static boolean answersPing() {
        try (Socket s = new Socket("127.0.0.1", port)) {
            OutputStream o = s.getOutputStream();
            o.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            o.flush();
            InputStream in = s.getInputStream();
            byte[] reply = in.readNBytes(7);
            return new String(reply, StandardCharsets.US_ASCII).equals("+PONG\r\n");
        } catch (IOException e) {
            return false;
        }
    }

    @AfterAll
    static void stopRedis() throws Exception {
        if (redis != null) {
            redis.destroyForcibly();
            redis.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private BenchOptions.Builder against(BenchOptions.Builder builder) {
        return builder.port(port).connections(2).pipeline(4).verify(true).warmUp(new Limit.Requests(50))
                .outputDir(out);
    }

    private static BenchResult run(BenchOptions options) throws IOException {
        ByteArrayOutputStream table = new ByteArrayOutputStream();
        return BenchRun.execute(options, new PrintStream(table, true, StandardCharsets.UTF_8), ProgressListener.NONE);
    }

    private static OpResult row(BenchResult result, long size, String op) {
        return result.results().stream().filter(r -> r.valueSize() == size && r.op().equals(op)).findFirst()
                .orElseThrow();
    }

    @Test
    void setgetWithVerificationSeesNoErrorsAndNoWrongBytes() throws Exception {
        BenchOptions options = against(BenchOptions.builder(new SetGetSpec())).valueSizes(List.of(1024, 65_539))
                .limit(new Limit.Requests(300)).build();
        BenchResult result = run(options);

        assertThat(result.results()).extracting(OpResult::op).containsExactly("SET", "GET", "SET", "GET");
        for (OpResult r : result.results()) {
            assertThat(r.count()).as("%s %d", r.op(), r.valueSize()).isEqualTo(300);
            assertThat(r.errors()).as("errors of %s %d: %s", r.op(), r.valueSize(), r.firstError()).isZero();
            assertThat(r.wrongBytes()).isZero();
            assertThat(r.latencyMs().p50()).isPositive();
        }
        assertThat(row(result, 65_539, "GET").hits()).isEqualTo(300);
        assertThat(row(result, 65_539, "GET").bytes()).isEqualTo(300L * 65_539);
        assertThat(result.failed()).isFalse();
        assertThat(BenchResultJson.read(out.resolve("setget.json"))).isEqualTo(result);
        assertThat(out.resolve("setget.csv")).exists();
    }

    @Test
    void lmcacheFindsWhatEarlierTurnsStored() throws Exception {
        LmcacheSpec spec = new LmcacheSpec("kvtier-bench-test", "", 16, 4096, 40, 1, 8, 1.0, 8, 16, 200,
                "metadata");
        BenchResult result = run(against(BenchOptions.builder(spec)).limit(new Limit.Requests(200)).build());

        assertThat(result.errors()).isZero();
        assertThat(result.wrongBytes()).isZero();
        OpResult request = row(result, 4096, "request");
        assertThat(request.count()).isEqualTo(200);
        assertThat(request.hitRate()).isBetween(0.5, 1.0);
        OpResult fetched = row(result, 4096, "GET kv_bytes");
        assertThat(fetched.hits()).isEqualTo(request.hits());
        assertThat(row(result, 4096, "GET metadata").count()).isEqualTo(fetched.count());
        assertThat(row(result, 4096, "SET kv_bytes").count()).isEqualTo(row(result, 4096, "SET metadata").count())
                .isEqualTo(request.misses());
        assertThat(request.bytes()).isEqualTo(fetched.bytes() + row(result, 4096, "SET kv_bytes").bytes()
                + 28 * (fetched.count() + request.misses()));
    }

    @Test
    void overflowReadsBackEveryValueRedisKept() throws Exception {
        BenchOptions options = against(BenchOptions.builder(new OverflowSpec(64 << 10, 4)))
                .valueSizes(List.of(4096)).limit(new Limit.Requests(64)).build();
        BenchResult result = run(options);

        OpResult get = row(result, 4096, "GET");
        assertThat(get.count()).isEqualTo(64);
        assertThat(get.hitRate()).isEqualTo(1.0);
        assertThat(result.failed()).isFalse();
    }

    @Test
    void aCorruptedValueIsCountedAsWrongBytesNotAccepted() throws Exception {
        byte[] key = "kvtier-bench:corrupt".getBytes(StandardCharsets.UTF_8);
        try (Connections connections = Connections.open("127.0.0.1", port, null, 1, ClientOptions.defaults(), null);
             Payloads payloads = new Payloads(true, 1);
             LoadGenerator generator = new LoadGenerator(connections.senders(), 1, Double.NaN, payloads,
                     ProgressListener.NONE)) {
            generator.run(new Phase("t", 4096, "set", List.of("SET"), new Limit.Requests(1),
                    i -> lane -> lane.set("SET", key, 5, 4096)));
            Reply.release(connections.call(5000, "SETRANGE", key, "100", "X"));
            PhaseOutcome read = generator.run(new Phase("t", 4096, "get", List.of("GET"), new Limit.Requests(1),
                    i -> lane -> lane.get("GET", key, 4096)));
            OpResult get = read.results().getFirst();
            assertThat(get.hits()).isEqualTo(1);
            assertThat(get.wrongBytes()).isEqualTo(1);
            assertThat(get.failed()).isTrue();
        }
    }

    @Test
    void anOpenLoopKeepsToItsSchedule() throws Exception {
        BenchOptions options = against(BenchOptions.builder(new SetGetSpec())).valueSizes(List.of(512))
                .limit(new Limit.Requests(100)).rate(OptionalDouble.of(500)).warmUp(Limit.none()).build();
        BenchResult result = run(options);

        assertThat(result.failed()).isFalse();
        assertThat(result.run().openLoop()).isTrue();
        assertThat(row(result, 512, "SET").seconds()).isGreaterThanOrEqualTo(99 / 500.0);
        assertThat(result.run().latency()).contains("intended send time");
    }
}
