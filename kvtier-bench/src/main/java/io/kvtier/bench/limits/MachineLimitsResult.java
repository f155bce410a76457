package io.kvtier.bench.limits;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The physical limits measured on one machine, every rate in bytes per second. {@code directIo} tells whether the
 * random reads bypassed the page cache (O_DIRECT); when false they were buffered and measure memory more than disk.
 * {@code fileBytes} is the scratch file actually used (possibly smaller than asked), {@code measureMillis} the time
 * given to each measurement.
 */
public record MachineLimitsResult(
        long loopbackOneStreamBytesPerSecond,
        long loopbackTwoStreamsBytesPerSecond,
        long diskSequentialWriteBytesPerSecond,
        long diskRandomReadOneReaderBytesPerSecond,
        long diskRandomReadFourReadersBytesPerSecond,
        boolean directIo,
        long fileBytes,
        long measureMillis,
        MachineInfo machine) {

    public MachineLimitsResult {
        if (machine == null) {
            throw new IllegalArgumentException("machine description is required");
        }
    }

    /** Human-readable lines, one per limit, in GB/s (10^9 bytes). */
    public List<String> summaryLines() {
        String reads = directIo ? "O_DIRECT" : "BUFFERED (O_DIRECT unsupported on " + machine.fileSystem() + ")";
        return List.of(
                line("loopback TCP, 1 stream", loopbackOneStreamBytesPerSecond),
                line("loopback TCP, 2 streams", loopbackTwoStreamsBytesPerSecond),
                line("disk sequential write + fsync", diskSequentialWriteBytesPerSecond),
                line("disk random 1 MiB reads, 1 reader, " + reads, diskRandomReadOneReaderBytesPerSecond),
                line("disk random 1 MiB reads, 4 readers, " + reads, diskRandomReadFourReadersBytesPerSecond));
    }

    private static String line(String what, long bytesPerSecond) {
        return String.format(Locale.ROOT, "%-60s %6.2f GB/s", what, bytesPerSecond / 1e9);
    }

    public String toJson() {
        return """
                {
                  "loopbackOneStreamBytesPerSecond": %d,
                  "loopbackTwoStreamsBytesPerSecond": %d,
                  "diskSequentialWriteBytesPerSecond": %d,
                  "diskRandomReadOneReaderBytesPerSecond": %d,
                  "diskRandomReadFourReadersBytesPerSecond": %d,
                  "directIo": %b,
                  "fileBytes": %d,
                  "measureMillis": %d,
                  "machine": {
                    "cores": %d,
                    "memoryBytes": %d,
                    "cpuModel": %s,
                    "kernel": %s,
                    "fileSystem": %s,
                    "fileSystemBlockBytes": %d,
                    "date": %s
                  }
                }
                """.formatted(loopbackOneStreamBytesPerSecond, loopbackTwoStreamsBytesPerSecond,
                diskSequentialWriteBytesPerSecond, diskRandomReadOneReaderBytesPerSecond,
                diskRandomReadFourReadersBytesPerSecond, directIo, fileBytes, measureMillis, machine.cores(),
                machine.memoryBytes(), Json.quote(machine.cpuModel()), Json.quote(machine.kernel()),
                Json.quote(machine.fileSystem()), machine.fileSystemBlockBytes(),
                Json.quote(machine.date().toString()));
    }

    /** Reads what {@link #toJson()} wrote; unknown keys are ignored, missing ones are an error naming the key. */
    public static MachineLimitsResult fromJson(String json) {
        Map<String, Object> top = Json.parseObject(json);
        Map<String, Object> m = field(top, "machine", Map.class);
        MachineInfo machine = new MachineInfo(Math.toIntExact(number(m, "cores")), number(m, "memoryBytes"),
                field(m, "cpuModel", String.class), field(m, "kernel", String.class),
                field(m, "fileSystem", String.class), number(m, "fileSystemBlockBytes"),
                Instant.parse(field(m, "date", String.class)));
        return new MachineLimitsResult(number(top, "loopbackOneStreamBytesPerSecond"),
                number(top, "loopbackTwoStreamsBytesPerSecond"), number(top, "diskSequentialWriteBytesPerSecond"),
                number(top, "diskRandomReadOneReaderBytesPerSecond"),
                number(top, "diskRandomReadFourReadersBytesPerSecond"), field(top, "directIo", Boolean.class),
                number(top, "fileBytes"), number(top, "measureMillis"), machine);
    }

    private static long number(Map<String, Object> object, String key) {
        return field(object, key, Long.class);
    }

    @SuppressWarnings("unchecked")
    private static <T> T field(Map<String, Object> object, String key, Class<? super T> type) {
        Object value = object.get(key);
        if (!type.isInstance(value)) {
            throw new IllegalArgumentException("limits JSON field \"" + key + "\" should be a "
                    + type.getSimpleName() + ", found " + value);
        }
        return (T) value;
    }
}
