package io.kvtier.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.kvtier.bench.compare.Launcher;
import io.kvtier.bench.compare.ServerProcess;
import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.RespConnection;
import io.kvtier.client.shm.SharedMemoryClient;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvtier bench local}: one kvtier node on this host (--shm yes), the same values saved and loaded over TCP
 * (SET, GET) and over shared memory (KVC.SHM), side by side in one run, with the machine's memory copy rate.
 */
@Command(name = "local", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"TCP against shared memory on one host: SET and GET of the same values through one local "
                + "kvtier node, each path in turn, with p50/p99 and CPU per GB.",
            "Example: kvtier bench local --value-size 4m --connections 4 --json"})
final class LocalCommand implements Callable<Integer> {
    @Option(names = "--value-size", paramLabel = "SIZE", defaultValue = "4m",
            converter = FlagValues.SizeConverter.class, description = "Value size (default: ${DEFAULT-VALUE}).")
    long valueSize;

    @Option(names = {"-c", "--connections"}, paramLabel = "N", defaultValue = "4",
            description = "Connections, one thread each (default: ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--seconds", paramLabel = "N", defaultValue = "5",
            description = "Seconds per pass: SET then GET, TCP then shared memory (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--memory", paramLabel = "SIZE", defaultValue = "2g", converter = FlagValues.SizeConverter.class,
            description = "The node's --memory; the keys take at most half of it (default: ${DEFAULT-VALUE}).")
    long memory;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    @Option(names = "--kvtier-launcher", paramLabel = "PATH",
            description = "kvtier's launcher script (default: the executable 'kvtier' above the running jar).")
    Path launcher;

    /** One pass's figures. */
    record Pass(double gbps, double p50Millis, double p99Millis, double cpuSecondsPerGb, long ops) {
        Map<String, Object> json(String op) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(op + "_gbps", round(gbps));
            m.put(op + "_p50_ms", round(p50Millis));
            m.put(op + "_p99_ms", round(p99Millis));
            m.put(op + "_cpu_s_per_gb", round(cpuSecondsPerGb));
            m.put(op + "_ops", ops);
            return m;
        }
    }

    @Override
    public Integer call() throws Exception {
        if (connections < 1 || seconds < 1 || valueSize < 1 || valueSize > (512L << 20)) {
            throw new IllegalArgumentException("--connections and --seconds must be at least 1, --value-size 1..512m");
        }
        long keysPerConnection = Math.max(1, Math.min(16, memory / 2 / (valueSize * connections)));
        if (valueSize * connections > memory / 2) {
            throw new IllegalArgumentException("--memory " + memory + " is too small for " + connections
                    + " values of " + valueSize + " bytes at once: give at least " + 2 * valueSize * connections);
        }
        Path scratch = Files.createTempDirectory("kvtier-bench-local");
        int port = ServerProcess.freePort();
        Path kvtier = launcher != null ? launcher : Launcher.discover();
        Map<String, Map<String, Object>> results = new LinkedHashMap<>();
        double memcpy = memcpyGbps();
        try (ServerProcess server = ServerProcess.start("kvtier", List.of(kvtier.toString(), "server", "--port",
                        Integer.toString(port), "--dir", scratch.resolve("data").toString(), "--memory",
                        Long.toString(memory), "--disk", Long.toString(Math.max(4 * memory, 1L << 30)), "--shm",
                        "yes"), port, scratch.resolve("kvtier.log"), Duration.ofSeconds(60));
                ClientResources resources = ClientResources.create(2)) {
            long serverPid = -1;
            for (boolean shm : new boolean[] {false, true}) {
                String mode = shm ? "shm" : "tcp";
                List<RespConnection> conns = new ArrayList<>();
                List<SharedMemoryClient> clients = new ArrayList<>();
                for (int i = 0; i < connections; i++) {
                    RespConnection c = RespConnection.connect(resources, "127.0.0.1", port,
                            new ClientOptions(Duration.ofSeconds(5), Duration.ofSeconds(30))).get();
                    conns.add(c);
                    SharedMemoryClient client = SharedMemoryClient.open(c, 30_000, shm);
                    if (shm && !client.local()) {
                        throw new IllegalStateException("the node's shared memory cannot be mapped from here");
                    }
                    if (shm) {
                        serverPid = client.serverPid();
                    }
                    clients.add(client);
                }
                if (serverPid < 0) {
                    try (RespConnection c = RespConnection.connect(resources, "127.0.0.1", port,
                            ClientOptions.defaults()).get();
                            SharedMemoryClient probe = SharedMemoryClient.open(c, 30_000, true)) {
                        serverPid = probe.serverPid();
                    }
                }
                run(clients, keysPerConnection, true, 1, serverPid); // warm-up: keys exist, JIT compiled
                run(clients, keysPerConnection, false, 1, serverPid);
                Pass set = run(clients, keysPerConnection, true, seconds, serverPid);
                Pass get = run(clients, keysPerConnection, false, seconds, serverPid);
                Map<String, Object> m = new LinkedHashMap<>(set.json("set"));
                m.putAll(get.json("get"));
                results.put(mode, m);
                for (SharedMemoryClient c : clients) {
                    c.close();
                }
                for (RespConnection c : conns) {
                    c.close();
                }
            }
        } finally {
            try (java.util.stream.Stream<Path> paths = Files.walk(scratch)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("value_size", valueSize);
        out.put("connections", connections);
        out.put("seconds", seconds);
        out.put("memcpy_gbps", round(memcpy));
        out.putAll(results);
        out.put("shm_over_tcp", Map.of(
                "set", round((double) results.get("shm").get("set_gbps") / (double) results.get("tcp").get("set_gbps")),
                "get", round((double) results.get("shm").get("get_gbps") / (double) results.get("tcp").get("get_gbps"))));
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(out));
        } else {
            System.out.print(table(out));
        }
        return 0;
    }

    private static String table(Map<String, Object> out) {
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "value size %d bytes, %d connections, %d s per pass; memory copy on this "
                + "machine %.2f GB/s%n%n", out.get("value_size"), out.get("connections"), out.get("seconds"),
                out.get("memcpy_gbps")));
        s.append(String.format(Locale.ROOT, "  %-5s %-4s %9s %9s %9s %12s%n", "PATH", "OP", "GB/s", "p50 ms", "p99 ms",
                "CPU s/GB"));
        for (String mode : List.of("tcp", "shm")) {
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) out.get(mode);
            for (String op : List.of("set", "get")) {
                s.append(String.format(Locale.ROOT, "  %-5s %-4s %9.2f %9.2f %9.2f %12.3f%n", mode, op.toUpperCase(),
                        m.get(op + "_gbps"), m.get(op + "_p50_ms"), m.get(op + "_p99_ms"), m.get(op + "_cpu_s_per_gb")));
            }
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> ratio = (Map<String, Object>) out.get("shm_over_tcp");
        s.append(String.format(Locale.ROOT, "%nshared memory over TCP: SET %.2fx, GET %.2fx%n", ratio.get("set"),
                ratio.get("get")));
        return s.toString();
    }

    /** Keys each connection has written so far (a GET pass reads only those). */
    private long[] written;

    /** One pass: every connection SETs (or GETs) its keys in turn for {@code seconds}; GETs check every 8th value. */
    private Pass run(List<SharedMemoryClient> clients, long keys, boolean set, int seconds, long serverPid)
            throws Exception {
        int n = clients.size();
        if (written == null || written.length != n) {
            written = new long[n];
        }
        Histogram[] latency = new Histogram[n];
        long[] ops = new long[n];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        long cpu0 = processCpuNanos() + serverCpuNanos(serverPid);
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        for (int t = 0; t < n; t++) {
            int me = t;
            latency[t] = new Histogram(3_600_000_000_000L, 3);
            threads.add(Thread.ofPlatform().name("bench-local-" + t).start(() -> {
                try {
                    byte[] pattern = new byte[(int) valueSize];
                    new Random(me).nextBytes(pattern);
                    ByteBuffer value = ByteBuffer.allocateDirect((int) valueSize).put(pattern).flip();
                    ByteBuffer out = ByteBuffer.allocateDirect((int) valueSize);
                    SharedMemoryClient c = clients.get(me);
                    start.await();
                    long i = 0;
                    long cycle = set ? keys : Math.max(1, written[me]);
                    while (System.nanoTime() < deadline) {
                        byte[] key = ("local-" + me + "-" + (i % cycle)).getBytes();
                        long t0 = System.nanoTime();
                        if (set) {
                            value.clear();
                            c.save(key, value);
                        } else {
                            out.clear();
                            if (c.load(key, out) != valueSize) {
                                throw new IllegalStateException("value " + new String(key) + " missing or short");
                            }
                        }
                        latency[me].recordValue(Math.max(1, System.nanoTime() - t0));
                        if (!set && i % 8 == 0 && !out.flip().equals(value.clear())) {
                            throw new IllegalStateException("value " + new String(key) + " read back wrong");
                        }
                        i++;
                    }
                    ops[me] = i;
                    if (set) {
                        written[me] = Math.max(written[me], Math.min(i, keys));
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        long begin = System.nanoTime();
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        double elapsed = (System.nanoTime() - begin) / 1e9;
        if (failure.get() != null) {
            throw new IOException("bench local: " + failure.get().getMessage(), failure.get());
        }
        long cpu = processCpuNanos() + serverCpuNanos(serverPid) - cpu0;
        Histogram all = new Histogram(3_600_000_000_000L, 3);
        long total = 0;
        for (int t = 0; t < n; t++) {
            all.add(latency[t]);
            total += ops[t];
        }
        double gb = total * (double) valueSize / 1e9;
        return new Pass(gb / elapsed, all.getValueAtPercentile(50) / 1e6, all.getValueAtPercentile(99) / 1e6,
                gb == 0 ? 0 : cpu / 1e9 / gb, total);
    }

    private static long processCpuNanos() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : 0;
    }

    /** The node's user + system CPU from /proc (clock ticks of 10 ms), 0 where that cannot be read. */
    private static long serverCpuNanos(long pid) {
        if (pid < 0) {
            return 0;
        }
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L; // utime, stime (fields 14, 15)
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** The machine's memory copy rate: 256 MiB copied between two off-heap buffers, best of 5. */
    static double memcpyGbps() {
        long bytes = 256L << 20;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(bytes);
            MemorySegment b = arena.allocate(bytes);
            MemorySegment.copy(a, 0, b, 0, bytes);
            double best = 0;
            for (int i = 0; i < 5; i++) {
                long t0 = System.nanoTime();
                MemorySegment.copy(a, 0, b, 0, bytes);
                best = Math.max(best, bytes / 1e9 / ((System.nanoTime() - t0) / 1e9));
            }
            return best;
        }
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
