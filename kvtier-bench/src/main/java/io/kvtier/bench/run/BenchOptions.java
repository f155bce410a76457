package io.kvtier.bench.run;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.workload.Bounds;
import io.kvtier.bench.workload.LmcacheSpec;
import io.kvtier.bench.workload.OverflowSpec;
import io.kvtier.bench.workload.SetGetSpec;
import io.kvtier.bench.workload.WorkloadSpec;
import io.kvtier.common.Units;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * Everything one benchmark run needs, validated on construction; messages name the flag, the value and the limit
 * ({@code "--connections 0 is below the minimum 1"}). Immutable. Build with {@link #builder(WorkloadSpec)}, which
 * starts from the defaults the CLI documents.
 *
 * @param host        RESP endpoint host (with {@code cluster}: the node first asked for CLUSTER SLOTS)
 * @param port        RESP endpoint port
 * @param cluster     route each command to its key's primary in a Redis-Cluster-style cluster
 * @param password    AUTH password, if the server wants one
 * @param connections connections opened (with {@code cluster}: in all, spread over the primaries)
 * @param pipeline    requests each connection keeps in flight (lanes per connection)
 * @param valueSizes  value sizes in bytes, run in order (lmcache: the chunk size)
 * @param keySpace    distinct keys per size for setget; 0 = automatic (1 GiB worth per size)
 * @param keyPrefix   prefix of every key the harness makes (LMCache keys excepted: they are LMCache's own)
 * @param workload    which workload, with its own parameters
 * @param limit       length of each measured pass: a request count or a duration (overflow: its working set)
 * @param warmUp      length of the untimed warm-up; {@link Limit#none()} for none
 * @param verify      self-describing values, every GET checked byte by byte
 * @param seed        seed of every pseudo-random choice (payload bytes, Zipf draws, read orders)
 * @param outputDir   where the JSON and CSV files go
 * @param rate        open-loop rate in requests/s; empty for a closed loop
 * @param timeout     per-command timeout
 * @param tls         connect over TLS with these files; empty for plain TCP
 */
public record BenchOptions(String host, int port, boolean cluster, Optional<String> password, int connections, int pipeline,
        List<Integer> valueSizes, long keySpace, String keyPrefix, WorkloadSpec workload, Limit limit, Limit warmUp,
        boolean verify, long seed, Path outputDir, OptionalDouble rate, Duration timeout, Optional<BenchTls> tls) {

    public static final int MAX_CONNECTIONS = 1024;
    public static final int MAX_PIPELINE = 1024;
    /** As Redis's default {@code proto-max-bulk-len} and kvtier's default {@code --max-value}. */
    public static final long MAX_VALUE_SIZE = 512L << 20;
    /** Verified values start with a 16-byte header (key hash, version). */
    public static final long MIN_VERIFIED_SIZE = 16;
    public static final long MAX_KEY_SPACE = 1_000_000_000;
    public static final double MAX_RATE = 10_000_000;
    public static final Duration MAX_DURATION = Duration.ofDays(1);

    public BenchOptions {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(password, "password");
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(outputDir, "outputDir");
        Objects.requireNonNull(rate, "rate");
        Objects.requireNonNull(tls, "tls");
        if (tls.isPresent() && cluster) {
            throw new IllegalArgumentException("--tls is not supported with --cluster");
        }
        if (host.isBlank()) {
            throw new IllegalArgumentException("--host must not be empty");
        }
        Bounds.check("--port", port, 1, 65535);
        Bounds.check("--connections", connections, 1, MAX_CONNECTIONS);
        Bounds.check("--pipeline", pipeline, 1, MAX_PIPELINE);
        valueSizes = List.copyOf(valueSizes);
        if (valueSizes.isEmpty()) {
            throw new IllegalArgumentException("--value-size needs at least one size");
        }
        String sizeFlag = workload instanceof LmcacheSpec ? "--chunk-bytes" : "--value-size";
        for (int size : valueSizes) {
            Bounds.checkBytes(sizeFlag, size, verify ? MIN_VERIFIED_SIZE : 1, MAX_VALUE_SIZE);
        }
        Bounds.check("--key-space", keySpace, 0, MAX_KEY_SPACE);
        checkLimit(limit, "--requests", "--duration", 1);
        checkLimit(warmUp, "--warmup", "--warmup", 0);
        if (rate.isPresent()) {
            Bounds.check("--rate", rate.getAsDouble(), 0.001, MAX_RATE);
        }
        if (timeout.toMillis() < 1 || timeout.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException("--timeout " + timeout.toMillis() + "ms is outside 1ms..24h");
        }
        if (workload instanceof OverflowSpec overflow) {
            overflow.checkFits(valueSizes.getFirst());
        }
    }

    private static void checkLimit(Limit limit, String countFlag, String durationFlag, long min) {
        switch (Objects.requireNonNull(limit, countFlag)) {
            case Limit.Requests(long count) -> Bounds.check(countFlag, count, min, Long.MAX_VALUE);
            case Limit.Timed(Duration d) -> {
                if (d.toMillis() < min) {
                    throw new IllegalArgumentException(durationFlag + " " + limit + " is below the minimum 1ms");
                }
                if (d.compareTo(MAX_DURATION) > 0) {
                    throw new IllegalArgumentException(durationFlag + " " + limit + " is above the maximum 24h");
                }
            }
        }
    }

    public static Builder builder(WorkloadSpec workload) {
        return new Builder(workload);
    }

    /** Without the password. */
    @Override
    public String toString() {
        return "BenchOptions[" + (cluster ? "cluster " : "") + target() + ", " + workload.name() + ", connections="
                + connections + ", pipeline=" + pipeline + ", sizes=" + valueSizesText() + ", limit=" + limit + ", warmUp=" + warmUp + ", verify="
                + verify + ", seed=" + seed + ", rate=" + rate + ", password=" + (password.isPresent() ? "***" : "none")
                + (tls.isPresent() ? ", tls" : "") + "]";
    }

    public String target() {
        return host + ":" + port;
    }

    /** Value sizes as people read them: {@code 256 KiB,1 MiB}. */
    public String valueSizesText() {
        return String.join(",", valueSizes.stream().map(s -> Units.bytes(s)).toList());
    }

    /** Starts from the documented defaults; not thread-safe. */
    public static final class Builder {
        public static final String DEFAULT_HOST = "127.0.0.1";
        public static final int DEFAULT_PORT = 6379;
        public static final int DEFAULT_CONNECTIONS = 4;
        public static final int DEFAULT_PIPELINE = 1;
        public static final int DEFAULT_VALUE_SIZE = 1 << 20;
        public static final String DEFAULT_KEY_PREFIX = "kvtier-bench:";
        public static final Duration DEFAULT_DURATION = Duration.ofSeconds(10);
        public static final Duration DEFAULT_WARMUP = Duration.ofSeconds(2);
        public static final long DEFAULT_SEED = 1;
        public static final String DEFAULT_OUTPUT_DIR = "bench-results";
        public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

        private String host = DEFAULT_HOST;
        private int port = DEFAULT_PORT;
        private boolean cluster;
        private Optional<String> password = Optional.empty();
        private int connections = DEFAULT_CONNECTIONS;
        private int pipeline = DEFAULT_PIPELINE;
        private List<Integer> valueSizes = List.of(DEFAULT_VALUE_SIZE);
        private long keySpace;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private final WorkloadSpec workload;
        private Limit limit = new Limit.Timed(DEFAULT_DURATION);
        private Limit warmUp = new Limit.Timed(DEFAULT_WARMUP);
        private boolean verify;
        private long seed = DEFAULT_SEED;
        private Path outputDir = Path.of(DEFAULT_OUTPUT_DIR);
        private OptionalDouble rate = OptionalDouble.empty();
        private Duration timeout = DEFAULT_TIMEOUT;
        private Optional<BenchTls> tls = Optional.empty();

        private Builder(WorkloadSpec workload) {
            this.workload = Objects.requireNonNull(workload, "workload");
            if (workload instanceof LmcacheSpec lmcache) {
                valueSizes = List.of(lmcache.chunkBytes());
            } else if (workload instanceof SetGetSpec) {
                valueSizes = List.of(256 << 10, 1 << 20, 4 << 20, 32 << 20);
            }
        }

        public Builder host(String v) { host = v; return this; }
        public Builder port(int v) { port = v; return this; }
        public Builder cluster(boolean v) { cluster = v; return this; }
        public Builder password(String v) { password = Optional.ofNullable(v); return this; }
        public Builder connections(int v) { connections = v; return this; }
        public Builder pipeline(int v) { pipeline = v; return this; }
        public Builder valueSizes(List<Integer> v) { valueSizes = v; return this; }
        public Builder keySpace(long v) { keySpace = v; return this; }
        public Builder keyPrefix(String v) { keyPrefix = v; return this; }
        public Builder limit(Limit v) { limit = v; return this; }
        public Builder warmUp(Limit v) { warmUp = v; return this; }
        public Builder verify(boolean v) { verify = v; return this; }
        public Builder seed(long v) { seed = v; return this; }
        public Builder outputDir(Path v) { outputDir = v; return this; }
        public Builder rate(OptionalDouble v) { rate = v; return this; }
        public Builder timeout(Duration v) { timeout = v; return this; }
        public Builder tls(Optional<BenchTls> v) { tls = v; return this; }

        public BenchOptions build() {
            return new BenchOptions(host, port, cluster, password, connections, pipeline, valueSizes, keySpace, keyPrefix,
                    workload, limit, warmUp, verify, seed, outputDir, rate, timeout, tls);
        }
    }
}
