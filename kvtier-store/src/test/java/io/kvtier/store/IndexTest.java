package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class IndexTest {
    private static Key key(int i) {
        return new Key(("key:" + i).getBytes(StandardCharsets.UTF_8));
    }

    private static Entry entry(Key k) {
        return new Entry(k, 1, 1, 0, EntryState.MEMORY);
    }

    @Test
    void everyKeyIsInExactlyOneBucketAndTheBucketsAreBalanced() {
        Index index = new Index();
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            index.put(key(i), entry(key(i)));
        }
        assertThat(index.size()).isEqualTo(n);
        Set<String> seen = new HashSet<>();
        int largest = 0;
        for (int b = 0; b < Index.BUCKETS; b++) {
            int[] inBucket = {0};
            int bucket = b;
            index.forEachInBucket(b, e -> {
                if (Index.bucketOf(e.fingerprint()) != bucket || !seen.add(new String(e.keyBytes,
                        StandardCharsets.UTF_8))) {
                    throw new AssertionError("key in bucket " + bucket + " twice or in the wrong bucket");
                }
                inBucket[0]++;
            });
            largest = Math.max(largest, inBucket[0]);
        }
        assertThat(seen).hasSize(n);
        assertThat(largest).as("largest bucket, mean %d", n / Index.BUCKETS).isLessThan(30);
    }

    @Test
    void aBucketWalkReturnsEveryKeyPresentThroughoutWhileOthersComeAndGo() throws Exception {
        Index index = new Index();
        List<Key> stable = new ArrayList<>();
        for (int i = 0; i < 50_000; i++) {
            Key k = key(i);
            stable.add(k);
            index.put(k, entry(k));
        }
        Thread churn = new Thread(() -> {
            for (int round = 0; round < 5; round++) {
                for (int i = 1_000_000; i < 1_050_000; i++) {
                    Key k = key(i);
                    index.put(k, entry(k));
                }
                for (int i = 1_000_000; i < 1_050_000; i++) {
                    Key k = key(i);
                    index.remove(index.get(k));
                }
            }
        });
        churn.start();
        Set<Key> seen = new HashSet<>();
        for (int b = 0; b < Index.BUCKETS; b++) {
            index.forEachInBucket(b, e -> {
                if (!seen.add(e.key())) {
                    throw new AssertionError("a key returned twice");
                }
            });
        }
        churn.join();
        assertThat(seen.containsAll(stable)).as("every key present throughout was returned").isTrue();
    }

    @Test
    void lockFreeReadersFindEveryStableKeyWhileBucketsGrowShrinkAndFillWithTombstones() throws Exception {
        Index index = new Index();
        int stable = 20_000;
        Entry[] entries = new Entry[stable];
        for (int i = 0; i < stable; i++) {
            entries[i] = entry(key(i));
            index.put(key(i), entries[i]);
        }
        AtomicBoolean stop = new AtomicBoolean();
        Thread churn = new Thread(() -> {
            for (int round = 0; round < 20 && !stop.get(); round++) { // every bucket grows, then shrinks again
                for (int i = 1_000_000; i < 1_100_000; i++) {
                    index.put(key(i), entry(key(i)));
                }
                for (int i = 1_000_000; i < 1_100_000; i++) {
                    index.computeIfPresent(key(i), (k, e) -> null);
                }
            }
        });
        churn.start();
        long misses = 0;
        long reads = 0;
        try {
            while (churn.isAlive()) {
                for (int i = 0; i < stable; i++, reads++) {
                    if (index.get(key(i)) != entries[i]) {
                        misses++;
                    }
                }
            }
        } finally {
            stop.set(true);
            churn.join();
        }
        assertThat(misses).as("of %d reads", reads).isZero();
        assertThat(index.size()).isEqualTo(stable);
        for (int i = 1_000_000; i < 1_100_000; i += 997) {
            assertThat(index.get(key(i))).isNull();
        }
    }

    @Test
    void computeReplacesKeepsOrRemovesOnlyItsKeyAndRefusesRecursiveWrites() {
        Index index = new Index();
        Key a = key(1);
        Entry first = entry(a);
        assertThat(index.compute(a, (k, e) -> e == null ? first : e)).isSameAs(first);
        Entry second = entry(key(1));
        assertThat(index.compute(a, (k, e) -> second)).isSameAs(second);
        assertThat(index.remove(first)).as("not its version any more").isFalse();
        assertThat(index.get(key(1))).isSameAs(second);
        assertThat(index.computeIfPresent(key(3), (k, e) -> {
            throw new AssertionError("ran for an absent key");
        })).isNull();
        assertThat(index.remove(second)).isTrue();
        assertThat(index.get(a)).isNull();
        assertThat(index.size()).isZero();
    }

    @Test
    void aWriteFromInsideAComputeOnTheSameBucketIsRefusedAndChangesNothing() {
        Index index = new Index();
        Key a = key(1);
        Key sameBucket = null;
        for (int i = 2; sameBucket == null; i++) {
            if (Index.bucketOf(key(i).fingerprint) == Index.bucketOf(a.fingerprint)) {
                sameBucket = key(i);
            }
        }
        Key b = sameBucket;
        assertThatThrownBy(() -> index.compute(a, (k, e) -> {
            index.put(b, entry(b));
            return entry(a);
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("recursive");
        assertThat(index.get(a)).isNull();
        assertThat(index.get(b)).isNull();
        assertThat(index.size()).isZero();
    }

    @Test
    void aLockFreeReadNeverReturnsAnotherKeysEntryWhenItsSlotIsReused() throws Exception {
        Index index = new Index();
        Key a = key(0);
        List<Key> sameBucket = new ArrayList<>();
        for (int i = 1; sameBucket.size() < 6; i++) { // keys of a's bucket and home slot: they take a's tombstone
            Key k = key(i);
            if (Index.bucketOf(k.fingerprint) == Index.bucketOf(a.fingerprint)
                    && (k.fingerprint & 15) == (a.fingerprint & 15)) {
                sameBucket.add(k);
            }
        }
        Entry[] mine = {entry(a)};
        index.put(a, mine[0]);
        AtomicBoolean stop = new AtomicBoolean();
        Thread churn = new Thread(() -> {
            while (!stop.get()) {
                index.remove(mine[0]);
                for (Key k : sameBucket) { // the first of them takes a's tombstone
                    index.put(k, entry(k));
                }
                for (Key k : sameBucket) {
                    index.computeIfPresent(k, (key, e) -> null);
                }
                Entry again = entry(a);
                index.put(a, again);
                mine[0] = again;
            }
        });
        churn.start();
        long wrong = 0;
        try {
            long end = System.nanoTime() + 2_000_000_000L; // the window is a few instructions wide
            for (long i = 0; i < 50_000_000 && System.nanoTime() < end; i++) {
                Entry e = index.get(a);
                if (e != null && !Arrays.equals(e.keyBytes, a.bytes)) {
                    wrong++;
                }
            }
        } finally {
            stop.set(true);
            churn.join();
        }
        assertThat(wrong).as("reads of key 0 that returned another key's entry").isZero();
    }
}
