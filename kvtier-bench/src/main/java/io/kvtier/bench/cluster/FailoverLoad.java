package io.kvtier.bench.cluster;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.load.Phase;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The failover run's load over {@code keys} keys {@code <prefix>failover:<i>}: a preload that writes every key once,
 * a steady mix of SETs and GETs (request {@code n} picks its key and whether it writes from a hash of the seed and
 * {@code n}, so runs repeat), and a final read of every key that shows whether any acknowledged value was lost
 * (every key was written before the timeline began, so a GET miss is a lost key). Stateless and thread-safe.
 */
final class FailoverLoad {
    static final String WORKLOAD = "failover";
    static final String PREFIX = "kvtier-bench:failover:";

    private final int keys;
    private final int size;
    private final int writePercent;
    private final long seed;

    FailoverLoad(int keys, int size, int writePercent, long seed) {
        this.keys = keys;
        this.size = size;
        this.writePercent = writePercent;
        this.seed = seed;
    }

    Phase preload() {
        return new Phase(WORKLOAD, size, "preload", List.of("SET"), new Limit.Requests(keys),
                i -> lane -> lane.set("SET", key(i), i, size));
    }

    /** SETs and GETs in the configured mix until {@code limit}. */
    Phase mixed(String label, Limit limit) {
        return new Phase(WORKLOAD, size, label, List.of("SET", "GET"), limit, i -> lane -> {
            long h = mix(seed ^ mix(i));
            long key = Math.floorMod(h, (long) keys);
            boolean write = Math.floorMod(h >>> 32, 100L) < writePercent;
            return write ? lane.set("SET", key(key), keys + i, size) : lane.get("GET", key(key), size);
        });
    }

    /** One GET of every key. */
    Phase readAll() {
        return new Phase(WORKLOAD, size, "read every key", List.of("GET"), new Limit.Requests(keys),
                i -> lane -> lane.get("GET", key(i), size));
    }

    static byte[] key(long index) {
        return (PREFIX + index).getBytes(StandardCharsets.UTF_8);
    }

    /** SplitMix64's finalizer: a well-spread 64-bit hash. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
