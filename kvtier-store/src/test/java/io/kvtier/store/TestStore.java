package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.store.memory.MemoryValue;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A {@link TieredStore} driven with string keys and heap byte arrays, plus a view of entry states for tests. */
final class TestStore implements AutoCloseable {
    static final long MiB = 1L << 20;
    static final long KiB = 1L << 10;

    final TieredStore store;

    TestStore(TieredStore store) {
        this.store = store;
    }

    static TestStore open(Path dir, long memoryBytes, long diskBytes) throws IOException {
        return new TestStore(TieredStore.open(new StoreOptions(dir, memoryBytes, diskBytes, 64 * MiB, 10_000, memoryBytes / 4)));
    }

    static byte[] key(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    void put(String key, byte[] value) {
        join(putAsync(key, value, PutOptions.PLAIN));
    }

    CompletableFuture<PutResult> putAsync(String key, byte[] value, PutOptions options) {
        MemoryValue mem = join(store.allocate(value.length));
        mem.write(value);
        return store.put(key(key), mem, options);
    }

    boolean remove(String key) {
        return join(store.remove(key(key), false)).existed();
    }

    /** The value of {@code key} from whichever tier holds it, or null. */
    byte[] read(String key) {
        try (ValueRef ref = store.get(key(key))) {
            return ref == null ? null : bytes(ref);
        }
    }

    /** Copies the bytes {@code ref} holds. */
    byte[] bytes(ValueRef ref) {
        if (ref.inMemory()) {
            return ref.memory().toArray();
        }
        try {
            ByteBuffer value = store.readFromDisk(ref, ByteBuffer.allocateDirect(ref.diskReadLength()));
            byte[] out = new byte[value.remaining()];
            value.get(out);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The state of the live entry of {@code key}, or null. */
    EntryState state(String key) {
        Entry e = store.index.get(new Key(key(key)));
        if (e == null) {
            return null;
        }
        synchronized (e) {
            return e.state();
        }
    }

    /**
     * Writes filler values until the demoter has moved {@code key} to disk. The fillers cycle over a fixed set of
     * keys: once they come back as S3-FIFO ghosts they queue in main behind {@code key}, so even a key sitting in
     * main (a ghost re-admission) reaches the head; fresh fillers alone would only ever churn the small queue.
     */
    void pushToDisk(String key) {
        int fillers = Math.toIntExact(2 * store.options().memoryBytes() / (128 * KiB));
        for (int i = 0; i < 1000 && state(key) != EntryState.DISK; i++) {
            String filler = "filler-" + i % fillers;
            put(filler, Values.of(filler, i, (int) (128 * KiB)));
        }
        assertThat(state(key)).as("state of %s after filling memory", key).isEqualTo(EntryState.DISK);
    }

    /** Polls {@code condition} until it holds (10 s at most); the store's background threads make it true. */
    static void await(String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    long freeMemory() {
        StoreStats stats = stats();
        return stats.memoryBudget() - stats.memoryUsedBytes();
    }

    StoreStats stats() {
        return store.stats();
    }

    static <T> T join(CompletableFuture<T> future) {
        try {
            return future.get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("future failed or timed out", e);
        }
    }

    @Override
    public void close() throws IOException {
        store.close();
    }
}
