package io.kvtier.bench.limits;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Measures this machine's physical limits: loopback TCP (1 and 2 streams), sequential write with fsync, and random
 * 1 MiB reads with O_DIRECT (1 and 4 readers). Each measurement is bounded by {@link LimitsOptions#measureTime()}
 * (the loopback ones add a short warm-up), so the default run takes about 14 s. The scratch file is always deleted.
 * Not meant to run next to other load: it would measure the sharing, not the machine.
 *
 * <p>Standalone: {@code ./mvnw -B -q -pl kvtier-bench -am install -Dmaven.test.skip=true && java -cp
 * kvtier-bench/target/classes io.kvtier.bench.limits.MachineLimits /tmp}
 */
public final class MachineLimits {
    private static final Duration MAX_WARM_UP = Duration.ofMillis(300);
    private static final long MAX_RESERVE = 1L << 30;

    private MachineLimits() {}

    public static MachineLimitsResult measure(Path scratchDir, LimitsOptions options) throws IOException,
            InterruptedException {
        Files.createDirectories(scratchDir);
        Duration time = options.measureTime();
        Duration warmUp = min(time.dividedBy(10), MAX_WARM_UP);
        long tcp1 = LoopbackProbe.bytesPerSecond(1, warmUp, time);
        long tcp2 = LoopbackProbe.bytesPerSecond(2, warmUp, time);
        long fileBytes = scratchFileBytes(Files.getFileStore(scratchDir), options.fileBytes(), scratchDir);
        Path file = Files.createTempFile(scratchDir, "kvtier-limits-", ".bin");
        try {
            DiskProbe.SequentialWrite write = DiskProbe.writeSequential(file, fileBytes, time);
            boolean direct = DiskProbe.supportsDirect(file);
            long read1 = DiskProbe.readRandom(file, write.bytes(), 1, direct, time);
            long read4 = DiskProbe.readRandom(file, write.bytes(), 4, direct, time);
            return new MachineLimitsResult(tcp1, tcp2, write.bytesPerSecond(), read1, read4, direct, write.bytes(),
                    time.toMillis(), MachineInfo.describe(scratchDir));
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * The asked size, shrunk to leave min(1 GiB, half the free space) free, in whole write chunks; fails when even
     * the minimum file does not fit.
     */
    static long scratchFileBytes(FileStore store, long asked, Path dir) throws IOException {
        long usable = store.getUsableSpace();
        long room = usable - Math.min(MAX_RESERVE, usable / 2);
        long bytes = Math.min(asked, room) / DiskProbe.WRITE_CHUNK * DiskProbe.WRITE_CHUNK;
        if (bytes < LimitsOptions.MIN_FILE) {
            throw new IOException(dir + " has " + usable + " bytes usable; the disk probe needs a scratch file of at"
                    + " least " + LimitsOptions.MIN_FILE + " bytes and leaves half the free space: point it at a"
                    + " directory with more room");
        }
        return bytes;
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** Measures with the defaults in the directory given as the only argument (default: the system temp dir). */
    public static void main(String[] args) throws IOException, InterruptedException {
        Path dir = Path.of(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir"));
        MachineLimitsResult result = measure(dir, LimitsOptions.DEFAULTS);
        result.summaryLines().forEach(System.out::println);
        System.out.println(result.toJson());
    }
}
