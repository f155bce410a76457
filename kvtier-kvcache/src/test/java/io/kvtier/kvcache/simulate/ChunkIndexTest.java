package io.kvtier.kvcache.simulate;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ChunkIndexTest {
    @Test
    void agreesWithAHashMapThroughGrowthAndRemovals() {
        ChunkIndex index = new ChunkIndex();
        Map<Long, ChunkEntry> expected = new HashMap<>();
        SplittableRandom random = new SplittableRandom(3);
        for (int op = 0; op < 200_000; op++) {
            long key = random.nextLong(5000);
            if (random.nextInt(3) == 0) {
                index.remove(key);
                expected.remove(key);
            } else if (!expected.containsKey(key)) {
                ChunkEntry e = new ChunkEntry(key, 1);
                index.add(e);
                expected.put(key, e);
            }
            long probe = random.nextLong(5000);
            assertThat(index.get(probe)).isSameAs(expected.get(probe));
        }
        assertThat(index.size()).isEqualTo(expected.size());
        expected.forEach((k, v) -> assertThat(index.get(k)).isSameAs(v));
    }
}
