package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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
                if (Index.bucketOf(e.key.fingerprint) != bucket || !seen.add(new String(e.key.bytes,
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
                    index.remove(k, index.get(k));
                }
            }
        });
        churn.start();
        Set<Key> seen = new HashSet<>();
        for (int b = 0; b < Index.BUCKETS; b++) {
            index.forEachInBucket(b, e -> {
                if (!seen.add(e.key)) {
                    throw new AssertionError("a key returned twice");
                }
            });
        }
        churn.join();
        assertThat(seen.containsAll(stable)).as("every key present throughout was returned").isTrue();
    }
}
