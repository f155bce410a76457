package io.kvtier.bench.workload;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.load.Phase;
import io.kvtier.bench.load.PhaseRunner;
import io.kvtier.common.Units;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;

/**
 * {@code overflow}: writes a working set of {@code factor x memory budget} bytes as distinct values
 * {@code <prefix>overflow:<size>:<i>}, then reads every one of them back in a random (seeded) order. A server that
 * drops values when its memory is full shows it as misses; a tiered one serves them from disk, and the GET row's
 * MB/s is then mostly disk-tier throughput. Misses are not errors. Run from one thread.
 */
public final class OverflowWorkload implements Workload {
    private final OverflowSpec spec;
    private final int size;
    private final String keyPrefix;
    private final long seed;

    public OverflowWorkload(OverflowSpec spec, int size, String keyPrefix, long seed) {
        spec.checkFits(size);
        this.spec = spec;
        this.size = size;
        this.keyPrefix = keyPrefix;
        this.seed = seed;
    }

    @Override
    public String name() {
        return spec.name();
    }

    @Override
    public void run(PhaseRunner runner) {
        int keys = (int) spec.keys(size);
        String label = name() + " " + Units.bytes((long) keys * size);
        runner.run(new Phase(name(), size, label + " SET", List.of("SET"), new Limit.Requests(keys),
                i -> lane -> lane.set("SET", key(i), 0, size)));
        int[] order = permutation(keys, seed);
        runner.run(new Phase(name(), size, label + " GET", List.of("GET"), new Limit.Requests(keys),
                i -> lane -> lane.get("GET", key(order[(int) i]), size)));
    }

    /** Fisher-Yates shuffle of 0..n-1. */
    static int[] permutation(int n, long seed) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    private byte[] key(long index) {
        return (keyPrefix + "overflow:" + size + ":" + index).getBytes(StandardCharsets.UTF_8);
    }
}
