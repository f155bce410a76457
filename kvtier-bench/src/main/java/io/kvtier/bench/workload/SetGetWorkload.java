package io.kvtier.bench.workload;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.load.Phase;
import io.kvtier.bench.load.PhaseOutcome;
import io.kvtier.bench.load.PhaseRunner;
import io.kvtier.common.Units;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * {@code setget}: for each value size, a SET pass over distinct keys {@code <prefix>setget:<size>:<i>}, then a GET
 * pass over the keys the SET pass wrote, in the same order; each pass runs to the limit. Key {@code i} of request
 * {@code n} is {@code n mod keySpace}, so a pass longer than the key space overwrites (SETs carry the request
 * index as version, which verification accepts whatever version is read). Run from one thread.
 */
public final class SetGetWorkload implements Workload {
    /** The automatic key space holds this many bytes per value size. */
    public static final long AUTO_KEY_SPACE_BYTES = 1L << 30;
    private final List<Integer> sizes;
    private final long keySpace;
    private final String keyPrefix;
    private final Limit limit;

    /** {@code keySpace} 0 means automatic: as many keys as {@value #AUTO_KEY_SPACE_BYTES} bytes hold, at least 1. */
    public SetGetWorkload(List<Integer> sizes, long keySpace, String keyPrefix, Limit limit) {
        this.sizes = List.copyOf(sizes);
        this.keySpace = keySpace;
        this.keyPrefix = keyPrefix;
        this.limit = limit;
    }

    @Override
    public String name() {
        return "setget";
    }

    public static long autoKeySpace(int size) {
        return Math.max(1, AUTO_KEY_SPACE_BYTES / size);
    }

    @Override
    public void run(PhaseRunner runner) {
        for (int size : sizes) {
            long keys = keySpace > 0 ? keySpace : autoKeySpace(size);
            String label = name() + " " + Units.bytes(size);
            PhaseOutcome set = runner.run(new Phase(name(), size, label + " SET", List.of("SET"), limit,
                    i -> lane -> lane.set("SET", key(size, i % keys), i, size)));
            long written = Math.min(set.tasks(), keys);
            if (written > 0) {
                runner.run(new Phase(name(), size, label + " GET", List.of("GET"), limit,
                        i -> lane -> lane.get("GET", key(size, i % written), size)));
            }
        }
    }

    private byte[] key(int size, long index) {
        return (keyPrefix + "setget:" + size + ":" + index).getBytes(StandardCharsets.UTF_8);
    }
}
