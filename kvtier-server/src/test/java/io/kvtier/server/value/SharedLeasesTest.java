package io.kvtier.server.value;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.store.IndexBudget;
import io.kvtier.store.PutOptions;
import io.kvtier.store.StoreOptions;
import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import io.kvtier.store.memory.MemoryValue;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Lease expiry on a real store with shared slabs: an expired lease's bytes are given back and its release says 0. */
class SharedLeasesTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    private TieredStore open() throws Exception {
        return TieredStore.open(new StoreOptions(dir, 8 * MiB, 64 * MiB, 4 * MiB, 10_000, 0,
                IndexBudget.defaultBytes(8 * MiB, 64 * MiB), List.of(), 0, true));
    }

    private static void put(TieredStore store, String key, int length) throws Exception {
        MemoryValue m = store.allocate(length).get();
        m.write(new byte[length]);
        store.put(key.getBytes(), m, PutOptions.PLAIN).get();
    }

    @Test
    void anExpiredLeaseGivesItsBytesBackAndItsReleaseSaysSo() throws Exception {
        try (TieredStore store = open(); SharedLeases leases = new SharedLeases(store, 100, 20)) {
            put(store, "k", (int) MiB);
            ValueRef ref = store.get("k".getBytes());
            SharedLeases.ReadLease lease = leases.read(1, ref);
            store.remove("k".getBytes(), false).get();
            long usedWhileLeased = store.stats().memoryUsedBytes();
            assertThat(usedWhileLeased).as("the deleted value's pages are held by the lease").isEqualTo(MiB);

            long deadline = System.nanoTime() + 5_000_000_000L;
            while (leases.held() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(leases.held()).isZero();
            assertThat(leases.expired.get()).isEqualTo(1);
            assertThat(store.stats().memoryUsedBytes()).as("given back when it expired").isZero();
            assertThat(leases.release(1, lease.id())).as("the reader must discard what it copied").isZero();
        }
    }

    @Test
    void anExpiredReservationIsGivenBackAndCannotBeCommitted() throws Exception {
        try (TieredStore store = open(); SharedLeases leases = new SharedLeases(store, 100, 20)) {
            leases.reserve(7, MiB);
            SharedLeases.WriteLease lease = leases.write(7, "k".getBytes(), store.allocate(MiB).get());
            assertThat(leases.heldBytes()).isEqualTo(MiB);
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (leases.held() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(leases.commit(lease)).isFalse();
            assertThat(leases.heldBytes()).isZero();
            assertThat(store.stats().memoryUsedBytes()).isZero();
            assertThat(leases.find(7, lease.id())).isNull();
        }
    }
}
