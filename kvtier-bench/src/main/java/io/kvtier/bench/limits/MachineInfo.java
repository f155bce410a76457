package io.kvtier.bench.limits;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.stream.Stream;

/** The machine a set of limits was measured on, and when: enough to tell whether two results are comparable. */
public record MachineInfo(int cores, long memoryBytes, String cpuModel, String kernel, String fileSystem,
        long fileSystemBlockBytes, Instant date) {
    private static final Path CPUINFO = Path.of("/proc/cpuinfo");

    public MachineInfo {
        if (cores < 1 || memoryBytes < 1 || fileSystemBlockBytes < 1) {
            throw new IllegalArgumentException("cores " + cores + ", memory " + memoryBytes + " and block size "
                    + fileSystemBlockBytes + " must all be positive");
        }
        if (cpuModel == null || kernel == null || fileSystem == null || date == null) {
            throw new IllegalArgumentException("cpu model, kernel, file system and date are required");
        }
    }

    /** Describes this machine now, with the file system that holds {@code scratchDir}. */
    static MachineInfo describe(Path scratchDir) throws IOException {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        return new MachineInfo(Runtime.getRuntime().availableProcessors(), os.getTotalMemorySize(), readCpuModel(),
                System.getProperty("os.name") + " " + System.getProperty("os.version"),
                Files.getFileStore(scratchDir).type(), DiskProbe.alignment(scratchDir), Instant.now());
    }

    /** The first "model name" of /proc/cpuinfo; "unknown" where there is no such file (not Linux). */
    private static String readCpuModel() throws IOException {
        if (!Files.isReadable(CPUINFO)) {
            return "unknown";
        }
        try (Stream<String> lines = Files.lines(CPUINFO)) {
            return lines.filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip())
                    .findFirst().orElse("unknown");
        }
    }
}
