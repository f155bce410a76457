package io.kvtier.it;

import io.kvtier.server.config.ServerOptions;
import io.kvtier.store.PutOptions;
import io.kvtier.store.TieredStore;
import io.kvtier.store.memory.MemoryValue;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Writes keys {@code key:%012d} with 8-byte values straight into a data directory through the store's API, as a node
 * with {@code --memory M --disk D --index-memory I} would hold them, then closes the store (everything on disk): a
 * data directory of millions of keys in a fraction of the time a client would take. Run in its own JVM, with the heap
 * the launcher computes for those flags, by {@link IndexMemoryIT}.
 *
 * <p>Arguments: DIR KEYS MEMORY DISK INDEX (bytes).
 */
public final class IndexFiller {
    private IndexFiller() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int keys = Integer.parseInt(args[1]);
        ServerOptions options = new ServerOptions(ServerOptions.DEFAULT_BIND, 0, dir, Long.parseLong(args[2]),
                Long.parseLong(args[3]), ServerOptions.DEFAULT_MAX_VALUE, null, true, 0,
                ServerOptions.DEFAULT_MAX_CLIENTS, ServerOptions.DEFAULT_DISK_THREADS, 1,
                ServerOptions.DEFAULT_DISK_READ_BUFFER, ServerOptions.DEFAULT_PIN_SHARE, Long.parseLong(args[4]), null,
                io.kvtier.server.config.ClientLimits.defaults(), null, 0);
        long start = System.nanoTime();
        try (TieredStore store = TieredStore.open(options.storeOptions())) {
            byte[] value = new byte[8];
            for (int i = 0; i < keys; i++) {
                MemoryValue v = store.tryAllocate(8);
                if (v == null) {
                    v = store.allocate(8).join();
                }
                v.write(digits(value, 0, 8, i));
                byte[] key = "key:000000000000".getBytes(StandardCharsets.US_ASCII);
                store.put(digits(key, 4, 12, i), v, PutOptions.PLAIN).join();
            }
        }
        System.out.printf("wrote %d keys in %d ms%n", keys, (System.nanoTime() - start) / 1_000_000);
    }

    /** Writes {@code n} in decimal into {@code b[from, from + width)}, zero-padded (as %0{width}d); returns b. */
    private static byte[] digits(byte[] b, int from, int width, long n) {
        for (int i = from + width - 1; i >= from; i--, n /= 10) {
            b[i] = (byte) ('0' + n % 10);
        }
        return b;
    }

    static String key(int i) {
        return String.format("key:%012d", i);
    }

    static String value(int i) {
        return String.format("%08d", i % 100_000_000);
    }
}
