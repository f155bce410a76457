package io.kvtier.bench.workload;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.load.Phase;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The untimed warm-up before any workload: alternating SET and GET of one value size over {@value #KEYS} keys
 * {@code <prefix>warmup:<i>}, so the server's and the client's JIT compile their hot paths and connections reach
 * steady state, without leaving more than {@value #KEYS} values behind ({@link #keys} lists them for a DEL).
 * Stateless.
 */
public final class WarmUp {
    public static final int KEYS = 16;

    private WarmUp() {
    }

    public static Phase phase(String keyPrefix, int size, Limit limit) {
        return new Phase("warmup", size, "warm-up", List.of("SET", "GET"), limit, i -> lane -> {
            byte[] key = key(keyPrefix, (i / 2) % KEYS);
            return i % 2 == 0 ? lane.set("SET", key, i, size) : lane.get("GET", key, size);
        });
    }

    public static List<byte[]> keys(String keyPrefix) {
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            keys.add(key(keyPrefix, i));
        }
        return keys;
    }

    private static byte[] key(String keyPrefix, long i) {
        return (keyPrefix + "warmup:" + i).getBytes(StandardCharsets.UTF_8);
    }
}
