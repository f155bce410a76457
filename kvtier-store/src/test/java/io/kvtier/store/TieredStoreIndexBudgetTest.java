package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.store.memory.MemoryValue;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The key index's heap budget (--index-memory): new keys are refused at it, reads go on, a restart past it serves. */
class TieredStoreIndexBudgetTest {
    static final long BUDGET = IndexBudget.MIN_BYTES;
    /** Keys "key:%012d" are 16 bytes. */
    static final long FITS = BUDGET / IndexBudget.charge(16);

    @TempDir
    Path dir;

    private TieredStore open(long indexBytes) throws IOException {
        return TieredStore.open(new StoreOptions(dir, 16 * TestStore.MiB, 64 * TestStore.MiB, 16 * TestStore.MiB, 10_000,
                0, indexBytes));
    }

    @Test
    void newKeysFailWithIndexFullAtTheBudgetWhileReadsOverwritesAndDeletesGoOn() throws IOException {
        try (TieredStore store = open(BUDGET)) {
            for (int i = 0; i < FITS; i++) {
                put(store, i, 1);
            }
            assertThat(store.indexBytes()).isEqualTo(FITS * IndexBudget.charge(16)).isLessThanOrEqualTo(BUDGET);
            assertThatThrownBy(() -> put(store, (int) FITS, 1)).isInstanceOf(IndexFullException.class)
                    .hasMessageContaining(FITS + " keys").hasMessageContaining("--index-memory");
            assertThat(store.size()).isEqualTo(FITS);
            assertThat(read(store, 0)).isEqualTo(value(0, 1));
            put(store, 0, 2); // an overwrite adds no key
            assertThat(read(store, 0)).isEqualTo(value(0, 2));
            store.remove(key(1), false).join();
            put(store, (int) FITS, 1); // a delete made room for one
            assertThat(read(store, (int) FITS)).isEqualTo(value((int) FITS, 1));
            assertThatThrownBy(() -> put(store, (int) FITS + 1, 1)).isInstanceOf(IndexFullException.class);
        }
    }

    @Test
    void aLargeValueForANewKeyIsRefusedAtTheBudgetAndItsRegionDiscarded() throws IOException {
        try (TieredStore store = open(BUDGET)) {
            for (int i = 0; i < FITS; i++) {
                put(store, i, 1);
            }
            long diskBefore = store.stats().diskUsedBytes();
            byte[] big = new byte[9 << 20]; // over half of memory: goes straight to disk
            var write = store.openDirectWrite(big.length);
            write.append(ByteBuffer.wrap(big), () -> { });
            assertThatThrownBy(() -> store.putDirect(key((int) FITS), write, PutOptions.PLAIN).join())
                    .hasCauseInstanceOf(IndexFullException.class);
            assertThat(store.size()).isEqualTo(FITS);
            assertThat(store.stats().diskUsedBytes()).isEqualTo(diskBefore);
            var again = store.openDirectWrite(big.length); // an existing key may still take a large value
            again.append(ByteBuffer.wrap(big), () -> { });
            assertThat(store.putDirect(key(0), again, PutOptions.PLAIN).join().written()).isTrue();
            assertThat(store.length(key(0))).isEqualTo(big.length);
        }
    }

    @Test
    void aRestartWithASmallerBudgetRecoversEveryKeyServesReadsAndRefusesNewKeys() throws IOException {
        int keys = (int) FITS + 1000;
        try (TieredStore store = open(2 * BUDGET)) {
            for (int i = 0; i < keys; i++) {
                put(store, i, 1);
            }
        }
        try (TieredStore store = open(BUDGET)) {
            assertThat(store.size()).isEqualTo(keys);
            assertThat(store.indexBytes()).isGreaterThan(BUDGET);
            for (int i = 0; i < keys; i += 97) {
                assertThat(read(store, i)).as("key %d", i).isEqualTo(value(i, 1));
            }
            assertThatThrownBy(() -> put(store, keys, 1)).isInstanceOf(IndexFullException.class);
            for (int i = 0; i < 1001; i++) {
                store.remove(key(i), false).join();
            }
            put(store, keys, 1);
            assertThat(read(store, keys)).isEqualTo(value(keys, 1));
        }
    }

    @Test
    void everyWayOutOfTheIndexRefundsTheKey() throws IOException {
        try (TieredStore store = open(BUDGET)) {
            put(store, 1, 1);
            put(store, 2, 1);
            put(store, 3, 1);
            long three = store.indexBytes();
            store.remove(key(1), false).join();
            store.setExpiry(key(2), System.currentTimeMillis() - 1, ExpireCondition.ALWAYS).join();
            assertThat(store.indexBytes()).isEqualTo(three / 3);
            store.clear().join();
            assertThat(store.indexBytes()).isZero();
        }
    }

    static void put(TieredStore store, int i, int version) {
        MemoryValue v = store.allocate(8).join();
        v.write(value(i, version));
        try {
            store.put(key(i), v, PutOptions.PLAIN).join();
        } catch (CompletionException e) {
            throw (RuntimeException) e.getCause();
        }
    }

    static byte[] read(TieredStore store, int i) {
        return new TestStore(store).read(new String(key(i), StandardCharsets.US_ASCII)); // not closed: the test owns the store
    }

    static byte[] key(int i) {
        return String.format("key:%012d", i).getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] value(int i, int version) {
        return String.format("%06d:%d", i % 1_000_000, version).getBytes(StandardCharsets.US_ASCII);
    }
}
