package io.kvtier.bench.limits;

import static io.kvtier.common.Json.object;

import io.kvtier.common.Json;
import java.math.BigDecimal;
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
        return Json.write(object("loopbackOneStreamBytesPerSecond", loopbackOneStreamBytesPerSecond,
                "loopbackTwoStreamsBytesPerSecond", loopbackTwoStreamsBytesPerSecond,
                "diskSequentialWriteBytesPerSecond", diskSequentialWriteBytesPerSecond,
                "diskRandomReadOneReaderBytesPerSecond", diskRandomReadOneReaderBytesPerSecond,
                "diskRandomReadFourReadersBytesPerSecond", diskRandomReadFourReadersBytesPerSecond,
                "directIo", directIo, "fileBytes", fileBytes, "measureMillis", measureMillis,
                "machine", object("cores", machine.cores(), "memoryBytes", machine.memoryBytes(),
                        "cpuModel", machine.cpuModel(), "kernel", machine.kernel(), "fileSystem", machine.fileSystem(),
                        "fileSystemBlockBytes", machine.fileSystemBlockBytes(), "date", machine.date().toString())));
    }

    /** Reads what {@link #toJson()} wrote; unknown keys are ignored, missing ones are an error naming the key. */
    public static MachineLimitsResult fromJson(String json) {
        if (!(Json.parse(json) instanceof Map<?, ?> top)) {
            throw new IllegalArgumentException("limits JSON is not an object");
        }
        Map<?, ?> m = field(top, "machine", Map.class);
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

    private static long number(Map<?, ?> object, String key) {
        Object value = object.get(key);
        if (!(value instanceof BigDecimal n)) {
            throw new IllegalArgumentException("limits JSON field \"" + key + "\" should be a number, found " + value);
        }
        try {
            return n.longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("limits JSON field \"" + key + "\" should be an integer, found " + n, e);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T field(Map<?, ?> object, String key, Class<? super T> type) {
        Object value = object.get(key);
        if (!type.isInstance(value)) {
            throw new IllegalArgumentException("limits JSON field \"" + key + "\" should be a "
                    + type.getSimpleName() + ", found " + value);
        }
        return (T) value;
    }
}
