package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * Debian's redis-benchmark 7.0.15 against a real node, with 1 MiB values and with its default small values. Asserts
 * that every requested test reports its throughput, that nothing errs, and that the benchmark's writes are stored;
 * the rates themselves are not judged.
 */
class RedisBenchmarkIT {
    /** A {@code -q} result line, e.g. "MSET (10 keys): 9174.31 requests per second, p50=2.655 msec". */
    private static final Pattern RESULT = Pattern.compile(
            "([A-Z_]+(?: \\(\\d+ keys\\))?): (\\d+(?:\\.\\d+)?) requests per second, p50=(\\d+(?:\\.\\d+)?) msec");
    /** The key redis-benchmark's SET, GET and MSET use when not given -r. */
    private static final String KEY = "key:__rand_int__";
    /** redis-benchmark fills values with random printable characters (genBenchmarkRandomData). */
    private static final String BENCHMARK_DATA = "[!-~]";

    @TempDir
    static Path tmp;
    static KvtierProcess node;

    @BeforeAll
    static void startNode() throws IOException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m");
    }

    @AfterAll
    static void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void runsSetAndGetWithOneMebibyteValues() throws IOException, InterruptedException {
        long before = commandsProcessed();
        Map<String, Double> rates = benchmark("-t", "set,get", "-n", "200", "-d", "1048576", "-c", "4");
        assertThat(rates).containsOnlyKeys("SET", "GET");
        assertThat(rates.values()).allSatisfy(rps -> assertThat(rps).isPositive());
        assertThat(commandsProcessed() - before).isGreaterThanOrEqualTo(400);
        try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
            assertThat(jedis.strlen(KEY)).isEqualTo(1 << 20);
            assertThat(jedis.getrange(KEY, (1 << 20) - 16, -1)).matches(BENCHMARK_DATA + "{16}");
        }
    }

    @Test
    void runsTheDefaultSmallValueSuite() throws IOException, InterruptedException {
        Map<String, Double> rates = benchmark("-t", "set,get,mset,ping", "-n", "2000");
        assertThat(rates).containsOnlyKeys("PING_INLINE", "PING_MBULK", "SET", "GET", "MSET (10 keys)");
        assertThat(rates.values()).allSatisfy(rps -> assertThat(rps).isPositive());
        try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
            assertThat(jedis.get(KEY)).matches(BENCHMARK_DATA + "{3}");
        }
    }

    /** Runs {@code redis-benchmark -q} with {@code args}; returns requests per second by test name. */
    private static Map<String, Double> benchmark(String... args) throws IOException, InterruptedException {
        String[] command = new String[args.length + 4];
        command[0] = "redis-benchmark";
        command[1] = "-p";
        command[2] = Integer.toString(node.port());
        command[3] = "-q";
        System.arraycopy(args, 0, command, 4, args.length);
        Tools.Result r = Tools.run(Duration.ofMinutes(3), command);
        String output = r.stdout() + r.stderr();
        assertThat(r.exitCode()).as(output).isZero();
        assertThat(output).doesNotContainIgnoringCase("error").doesNotContain("ERR");
        Map<String, Double> rates = new LinkedHashMap<>();
        for (String line : output.split("[\r\n]+")) {
            Matcher m = RESULT.matcher(line.strip());
            if (m.matches()) {
                assertThat(rates.put(m.group(1), Double.parseDouble(m.group(2)))).as("one line per test").isNull();
            }
        }
        return rates;
    }

    private static long commandsProcessed() {
        try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
            Matcher m = Pattern.compile("total_commands_processed:(\\d+)").matcher(jedis.info("stats"));
            assertThat(m.find()).as("INFO stats has total_commands_processed").isTrue();
            return Long.parseLong(m.group(1));
        }
    }
}
