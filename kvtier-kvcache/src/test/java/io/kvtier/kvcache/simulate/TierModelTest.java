package io.kvtier.kvcache.simulate;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The simulated store's tiering against the store's rules: demotion, promotion, region eviction, bypass. */
class TierModelTest {
    private static final long KiB = 1024;
    private static final long MiB = 1024 * KiB;
    private static final long CHUNK = 256 * KiB;

    @Test
    void demotesTheOldestValuesWhenMemoryIsFull() {
        TierModel store = new TierModel(new Budget(MiB, 64 * MiB));
        for (long k = 0; k < 4; k++) {
            store.put(k, CHUNK);
        }

        // 1 MiB holds 4 values, but the demoter keeps 1/8 (128 KiB) free: the first one left for disk
        assertThat(store.where(0)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.where(1)).isEqualTo(TierModel.Hit.MEMORY);
        assertThat(store.where(3)).isEqualTo(TierModel.Hit.MEMORY);
        assertThat(store.counters.diskWrittenBytes).isEqualTo(CHUNK);
        assertThat(store.memoryUsedBytes()).isLessThanOrEqualTo(MiB - MiB / 8);
    }

    @Test
    void promotesOnTheSecondDiskHitAndKeepsTheDiskCopy() {
        TierModel store = new TierModel(new Budget(MiB, 64 * MiB));
        for (long k = 0; k < 4; k++) {
            store.put(k, CHUNK);
        }

        assertThat(store.get(0)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.where(0)).as("one disk hit does not promote").isEqualTo(TierModel.Hit.DISK);
        assertThat(store.get(0)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.where(0)).isEqualTo(TierModel.Hit.MEMORY);
        assertThat(store.isClean(0)).isTrue();
        assertThat(store.counters.promotions).isEqualTo(1);
        assertThat(store.get(0)).isEqualTo(TierModel.Hit.MEMORY);
    }

    @Test
    void demotingAPromotedValueAgainWritesNothing() {
        TierModel store = new TierModel(new Budget(MiB, 64 * MiB));
        for (long k = 0; k < 7; k++) {
            store.put(k, CHUNK); // memory keeps 3 (4, 5, 6); 0-3 went to disk
        }
        for (long k = 0; k < 3; k++) {
            store.get(k);
            store.get(k); // promoted, each to the fresh end (chunks are ordered by recency); 4, 5, 6 leave
        }
        long written = store.counters.diskWrittenBytes;

        store.get(3);
        store.get(3); // promoting 3 fills memory: the least recently used, 0, leaves

        assertThat(store.where(0)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.where(3)).isEqualTo(TierModel.Hit.MEMORY);
        assertThat(store.counters.diskWrittenBytes).as("0 was clean: nothing written").isEqualTo(written);
        assertThat(store.counters.promotions).isEqualTo(4);
    }

    @Test
    void evictsWholeRegionsOldestFirst() {
        // 16 MiB of disk: regions of 1 MiB, three 256 KiB records each (a fourth would overflow by its header)
        TierModel store = new TierModel(new Budget(MiB, 16 * MiB));
        int n = 100;
        for (long k = 0; k < n; k++) {
            store.put(k, CHUNK);
        }

        int firstKept = 0;
        while (store.where(firstKept) == TierModel.Hit.MISS) {
            firstKept++;
        }
        for (long k = firstKept; k < n; k++) {
            assertThat(store.where(k)).as("key %d", k).isNotEqualTo(TierModel.Hit.MISS);
        }
        assertThat(firstKept % 3).as("lost in whole regions of 3 records").isZero();
        assertThat(store.counters.evictedBytes).isEqualTo(firstKept * CHUNK);
        assertThat(store.evictedRegions()).isEqualTo(firstKept / 3);
        assertThat(store.diskUsedBytes()).isLessThanOrEqualTo(16 * MiB);
    }

    @Test
    void anEvictedRegionOnlyDropsTheDiskCopyOfAValueAlsoInMemory() {
        TierModel store = new TierModel(new Budget(MiB, 16 * MiB));
        for (long k = 0; k < 4; k++) {
            store.put(k, CHUNK);
        }
        store.get(0);
        store.get(0); // 0 is back in memory, clean; its record sits in the first region
        store.get(0); // a memory hit: 0 moves to the fresh end, and each get below keeps it there

        for (long k = 100; k < 200; k++) {
            store.put(k, CHUNK);
            store.get(0);
        }

        assertThat(store.where(0)).as("hot: kept in memory while its region was evicted")
                .isEqualTo(TierModel.Hit.MEMORY);
        assertThat(store.isClean(0)).isFalse();
        assertThat(store.where(1)).isEqualTo(TierModel.Hit.MISS);
    }

    @Test
    void aValueOverHalfTheMemoryGoesStraightToDiskAndIsNeverPromoted() {
        TierModel store = new TierModel(new Budget(MiB, 64 * MiB));
        store.put(1, 600 * KiB);

        assertThat(store.where(1)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.memoryUsedBytes()).isZero();
        assertThat(store.get(1)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.get(1)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.where(1)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.counters.promotions).isZero();
    }

    @Test
    void withoutADiskTierVictimsAreLost() {
        TierModel store = new TierModel(new Budget(MiB, 0));
        for (long k = 0; k < 10; k++) {
            store.put(k, CHUNK);
        }

        assertThat(store.keys()).isEqualTo(3);
        assertThat(store.counters.evictedBytes).isEqualTo(7 * CHUNK);
        assertThat(store.counters.diskWrittenBytes).isZero();
    }

    @Test
    void underADiskWriteLimitUnreadChunksAreDroppedOnceTheBucketIsEmpty() {
        // 1 byte/s: the bucket is its 64 MiB floor, 256 chunks, and refills by nothing over the test
        TierModel store = new TierModel(new Budget(MiB, 1024 * MiB, 1));
        store.clock(0);
        for (long k = 0; k < 300; k++) {
            store.put(k, CHUNK); // memory keeps the last 3: 297 leave it unread
        }

        assertThat(store.where(0)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.where(255)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.where(256)).as("the bucket was empty").isEqualTo(TierModel.Hit.MISS);
        assertThat(store.where(296)).isEqualTo(TierModel.Hit.MISS);
        assertThat(store.where(297)).isEqualTo(TierModel.Hit.MEMORY);
        assertThat(store.counters.diskWrittenBytes).isEqualTo(256 * CHUNK);
        assertThat(store.counters.admissionDroppedBytes).isEqualTo(41 * CHUNK);
        assertThat(store.counters.evictedBytes).as("dropped chunks are lost ones").isEqualTo(41 * CHUNK);

        store.get(299); // read in memory: written when it leaves, whatever the bucket holds
        store.put(256, CHUNK); // dropped once, stored again: its second chance
        for (long k = 300; k < 306; k++) {
            store.put(k, CHUNK);
        }
        assertThat(store.where(299)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.where(256)).isEqualTo(TierModel.Hit.DISK);
        assertThat(store.where(298)).isEqualTo(TierModel.Hit.MISS);
    }

    @Test
    void theBucketRefillsOnTheTracesClock() {
        TierModel store = new TierModel(new Budget(MiB, 1024 * MiB, CHUNK)); // 256 KiB/s, a 64 MiB bucket
        store.clock(0);
        for (long k = 0; k < 300; k++) {
            store.put(k, CHUNK);
        }
        long dropped = store.counters.admissionDroppedBytes;
        store.clock(10); // ten seconds: ten chunks' worth
        for (long k = 300; k < 320; k++) {
            store.put(k, CHUNK);
        }
        assertThat(store.counters.admissionDroppedBytes - dropped).isEqualTo(10 * CHUNK);
    }
}
