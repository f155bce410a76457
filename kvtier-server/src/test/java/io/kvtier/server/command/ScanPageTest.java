package io.kvtier.server.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.store.PutOptions;
import io.kvtier.store.StoreOptions;
import io.kvtier.store.TieredStore;
import io.kvtier.store.memory.MemoryValue;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScanPageTest {
    private static final int KEYS = 20_000;

    @TempDir
    Path dir;
    TieredStore store;

    @BeforeEach
    void fill() throws Exception {
        store = TieredStore.open(new StoreOptions(dir, 64L << 20, 256L << 20, 1L << 20, 10_000, 16L << 20));
        for (int i = 0; i < KEYS; i++) {
            put("key:" + i);
        }
    }

    @AfterEach
    void close() throws Exception {
        store.close();
    }

    private void put(String key) {
        MemoryValue v = store.tryAllocate(1);
        v.write(new byte[] {'v'});
        store.put(key.getBytes(StandardCharsets.UTF_8), v, PutOptions.PLAIN).join();
    }

    private static Set<String> strings(List<byte[]> keys) {
        Set<String> out = new HashSet<>();
        keys.forEach(k -> out.add(new String(k, StandardCharsets.UTF_8)));
        return out;
    }

    @Test
    void aFullScanWithCountOneReturnsEveryKeyOnceAndEndsAtZero() {
        List<byte[]> all = new ArrayList<>();
        long cursor = 0;
        int calls = 0;
        do {
            KeyspaceCommands.ScanPage page = KeyspaceCommands.scanPage(store, null, cursor, 1, null, true);
            all.addAll(page.keys());
            cursor = page.next();
            calls++;
        } while (cursor != 0);
        assertThat(all).hasSize(KEYS);
        assertThat(strings(all)).hasSize(KEYS);
        assertThat(calls).as("count 1 visits one non-empty bucket per call").isGreaterThan(KEYS / 10);
    }

    @Test
    void aCursorCanBeReusedAndIsNeverInvalidated() {
        KeyspaceCommands.ScanPage first = KeyspaceCommands.scanPage(store, null, 0, 100, null, true);
        for (int i = 0; i < 10_000; i++) {
            KeyspaceCommands.scanPage(store, null, 0, 1, null, true);
        }
        KeyspaceCommands.ScanPage once = KeyspaceCommands.scanPage(store, null, first.next(), 100, null, true);
        KeyspaceCommands.ScanPage twice = KeyspaceCommands.scanPage(store, null, first.next(), 100, null, true);
        assertThat(strings(twice.keys())).isEqualTo(strings(once.keys()));
        assertThat(twice.next()).isEqualTo(once.next());
    }

    @Test
    void keysPresentThroughoutAreReturnedWhileOthersAreAddedAndDeleted() {
        Set<String> seen = new HashSet<>();
        long cursor = 0;
        int round = 0;
        do {
            KeyspaceCommands.ScanPage page = KeyspaceCommands.scanPage(store, null, cursor, 50, null, true);
            page.keys().forEach(k -> seen.add(new String(k, StandardCharsets.UTF_8)));
            cursor = page.next();
            put("new:" + round);
            store.remove(("new:" + (round - 5)).getBytes(StandardCharsets.UTF_8), false).join();
            round++;
        } while (cursor != 0);
        List<String> stable = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            stable.add("key:" + i);
        }
        assertThat(seen.containsAll(stable)).as("every key present for the whole scan was returned").isTrue();
    }

    @Test
    void matchAndTypeFilterButCountStillBoundsTheWork() {
        KeyspaceCommands.ScanPage page = KeyspaceCommands.scanPage(store, null, 0, Long.MAX_VALUE,
                "key:1?".getBytes(StandardCharsets.UTF_8), true);
        assertThat(page.next()).isZero();
        assertThat(strings(page.keys())).containsExactlyInAnyOrder("key:10", "key:11", "key:12", "key:13", "key:14",
                "key:15", "key:16", "key:17", "key:18", "key:19");
        assertThat(KeyspaceCommands.scanPage(store, null, 0, Long.MAX_VALUE, null, false).keys()).isEmpty();
        assertThat(KeyspaceCommands.scanPage(store, null, TieredStore.SCAN_BUCKETS, 10, null, true).next()).isZero();
        assertThat(KeyspaceCommands.scanPage(store, null, -1, 10, null, true).keys()).isEmpty();
    }

    @Test
    void onlyKeysTheNodeOwnsAreReturnedAndTheCursorStillWalksEveryBucket() {
        // A cluster node's keyspace is the keys of its primary slots; here: the keys with an even number.
        java.util.function.Predicate<byte[]> own = k -> Integer.parseInt(new String(k, StandardCharsets.UTF_8)
                .substring(4)) % 2 == 0;
        java.util.List<String> seen = new java.util.ArrayList<>();
        long cursor = 0;
        do {
            KeyspaceCommands.ScanPage page = KeyspaceCommands.scanPage(store, own, cursor, 7, null, true);
            seen.addAll(strings(page.keys()));
            cursor = page.next();
        } while (cursor != 0);
        assertThat(seen).doesNotHaveDuplicates().allMatch(k -> Integer.parseInt(k.substring(4)) % 2 == 0)
                .hasSize(KEYS / 2);
    }
}
