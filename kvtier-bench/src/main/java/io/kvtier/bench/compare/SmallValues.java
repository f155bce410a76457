package io.kvtier.bench.compare;

import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.LatencySummary;
import io.kvtier.bench.report.OpResult;
import io.kvtier.bench.report.RunInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The {@code small} workload: per-command cost, measured the way Redis users first measure a Redis-compatible server,
 * by {@code redis-benchmark} (from PATH) itself: {@value #CONNECTIONS} connections, random keys among
 * {@value #KEY_SPACE} ({@code key:__rand_int__}), without pipelining and with {@code -P 16}. Per value size and
 * pipeline depth it runs SET, GET and MSET (of 10 keys: redis-benchmark's {@code -t set,get,mset}), then EXISTS of
 * one key and MGET of 10 keys as custom commands. SET runs first, so the GETs mostly hit (about 86% of the key space
 * is written by then, the same share on both servers).
 *
 * <p>Each command becomes one {@link OpResult} named {@code "SET P1"}, {@code "MGET10 P16"} and so on: its count is
 * the requests sent, its time count / rps, its bytes the value bytes the requests name (count x size x keys per
 * request, EXISTS included), so that its MB/s ratio against Redis is the ratio of requests per second; latencies are
 * redis-benchmark's (p50, p99, max, mean; p90 and p99.9 are not reported, NaN). Hits and misses are not counted.
 */
final class SmallValues {
    static final int CONNECTIONS = 50;
    static final int KEY_SPACE = 100_000;
    static final List<Integer> PIPELINES = List.of(1, 16);
    /** Requests of a pipelined test per unpipelined one: pipelined commands run faster (not MSET of 10 4 KiB values). */
    static final int PIPELINED_REQUEST_FACTOR = 2;
    private static final long TIMEOUT_MINUTES = 10;

    private SmallValues() {
    }

    /** One pass against the server on {@code port}: every command at {@code size} bytes and {@code pipeline}. */
    static BenchResult run(int port, int size, int pipeline, long requests, long seed, Path scratch)
            throws IOException {
        long n = pipeline > 1 ? requests * PIPELINED_REQUEST_FACTOR : requests;
        List<OpResult> results = new ArrayList<>();
        String suffix = " P" + pipeline;
        List<String> base = List.of("redis-benchmark", "-h", "127.0.0.1", "-p", Integer.toString(port), "-c",
                Integer.toString(CONNECTIONS), "-n", Long.toString(n), "-r", Integer.toString(KEY_SPACE), "-d",
                Integer.toString(size), "-P", Integer.toString(pipeline), "--csv");
        for (Row row : redisBenchmark(concat(base, List.of("-t", "set,get,mset")), scratch)) {
            String name = row.test().toUpperCase(Locale.ROOT);
            String op = name.startsWith("MSET") ? "MSET10" : name;
            results.add(result(op + suffix, size, op.equals("MSET10") ? 10 : 1, n, row));
        }
        Row exists = single(redisBenchmark(concat(base, List.of("EXISTS", "key:__rand_int__")), scratch));
        results.add(result("EXISTS" + suffix, size, 1, n, exists));
        List<String> mget = new ArrayList<>(List.of("MGET"));
        mget.addAll(Collections.nCopies(10, "key:__rand_int__"));
        results.add(result("MGET10" + suffix, size, 10, n, single(redisBenchmark(concat(base, mget), scratch))));
        RunInfo run = new RunInfo(Instant.now().toString(), "127.0.0.1:" + port, "small", CONNECTIONS, pipeline,
                Double.NaN, false, seed, "redis-benchmark's own latencies (closed loop, " + CONNECTIONS
                + " connections x " + pipeline + " in flight)", Map.of("requests", Long.toString(n),
                "keySpace", Integer.toString(KEY_SPACE), "valueSize", Integer.toString(size)));
        return new BenchResult(run, results);
    }

    /** One line of redis-benchmark's CSV: the test's name, requests per second and latencies in ms. */
    record Row(String test, double rps, double avgMs, double p50Ms, double p99Ms, double maxMs) {
    }

    private static OpResult result(String op, int size, int keysPerRequest, long n, Row row) {
        double seconds = row.rps() > 0 ? n / row.rps() : 0;
        LatencySummary latency = new LatencySummary(row.p50Ms(), Double.NaN, row.p99Ms(), Double.NaN, row.maxMs(),
                row.avgMs());
        return new OpResult("small", size, op, n, seconds, n * size * keysPerRequest, 0, 0, 0, 0, "", latency, "");
    }

    private static Row single(List<Row> rows) throws IOException {
        if (rows.size() != 1) {
            throw new IOException("redis-benchmark printed " + rows.size() + " results for one command");
        }
        return rows.getFirst();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    /**
     * Runs redis-benchmark and parses its CSV: a header, then one quoted line per test. A server error (redis-benchmark
     * stops at the first error reply) or a run past {@value #TIMEOUT_MINUTES} minutes is an IOException.
     */
    static List<Row> redisBenchmark(List<String> command, Path scratch) throws IOException {
        Path output = Files.createTempFile(scratch, "redis-benchmark-", ".csv");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        try {
            if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException("redis-benchmark ran past " + TIMEOUT_MINUTES + " minutes: " + command);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        String text = Files.readString(output, StandardCharsets.UTF_8);
        Files.deleteIfExists(output);
        if (p.exitValue() != 0) {
            throw new IOException("redis-benchmark exited with " + p.exitValue() + ": " + text.strip());
        }
        return parse(text);
    }

    /** The CSV of {@code redis-benchmark --csv} (Redis 7: test, rps, avg, min, p50, p95, p99, max). */
    static List<Row> parse(String csv) throws IOException {
        List<Row> rows = new ArrayList<>();
        for (String line : csv.lines().map(String::strip).filter(l -> l.startsWith("\"")).toList()) {
            String[] f = line.split("\",\"");
            for (int i = 0; i < f.length; i++) {
                f[i] = f[i].replace("\"", "");
            }
            if (f[0].equals("test")) {
                continue;
            }
            if (f.length < 8) {
                throw new IOException("unexpected redis-benchmark line: " + line);
            }
            try {
                rows.add(new Row(f[0], Double.parseDouble(f[1]), Double.parseDouble(f[2]), Double.parseDouble(f[4]),
                        Double.parseDouble(f[6]), Double.parseDouble(f[7])));
            } catch (NumberFormatException e) {
                throw new IOException("unexpected redis-benchmark line: " + line, e);
            }
        }
        if (rows.isEmpty()) {
            throw new IOException("redis-benchmark printed no result: " + csv.strip());
        }
        return rows;
    }
}
