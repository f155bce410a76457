package io.kvtier.router.map;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.events.StoreEvent;
import io.kvtier.events.StoreEvent.Kind;
import io.kvtier.events.StoreEvent.Tier;
import io.kvtier.events.StoreEventBatch;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The store map follows a node's events, and offers the fetch probes a key it holds in each tier now. */
class StoreMapTest {
    private static final String NODE = "127.0.0.1:6379";

    private static byte[] key(int i) {
        return ("sim-model@1@0@" + Integer.toHexString(0xabc0 + i) + "@bfloat16kv_bytes")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static void apply(StoreMap map, StoreEvent... events) {
        map.apply(NODE, new StoreEventBatch(NODE, 7, System.currentTimeMillis() / 1000.0, false, List.of(events)));
    }

    @Test
    void recentKeysFollowTheirChunksTier() {
        StoreMap map = new StoreMap();
        map.addNode(NODE);
        apply(map, new StoreEvent(Kind.STORED, key(1), 1 << 20, Tier.MEMORY),
                new StoreEvent(Kind.STORED, key(2), 1 << 20, Tier.MEMORY),
                new StoreEvent(Kind.STORED, "user:1".getBytes(StandardCharsets.UTF_8), 10, Tier.MEMORY));
        assertThat(map.recentKey(NODE, Tier.MEMORY, null)).isEqualTo(key(2)); // the newest first
        assertThat(map.recentKey(NODE, Tier.MEMORY, key(2))).isEqualTo(key(1)); // not the one probed last
        assertThat(map.recentKey(NODE, Tier.DISK, null)).isNull();

        apply(map, new StoreEvent(Kind.MOVED, key(2), 1 << 20, Tier.DISK));
        assertThat(map.recentKey(NODE, Tier.DISK, null)).isEqualTo(key(2));
        assertThat(map.recentKey(NODE, Tier.DISK, key(2))).as("never the same disk chunk twice in a row").isNull();
        assertThat(map.recentKey(NODE, Tier.MEMORY, null)).as("key 2 is on disk now").isEqualTo(key(1));

        apply(map, new StoreEvent(Kind.DELETED, key(1), 0, Tier.MEMORY));
        assertThat(map.recentKey(NODE, Tier.MEMORY, null)).isNull();
        for (int i = 10; i < 10 + StoreMap.RECENT * 3; i++) { // the ring keeps the last few only
            apply(map, new StoreEvent(Kind.STORED, key(i), 1 << 20, Tier.MEMORY));
        }
        assertThat(map.recentKey(NODE, Tier.MEMORY, null)).isEqualTo(key(10 + StoreMap.RECENT * 3 - 1));
        assertThat(map.stats()).singleElement().satisfies(s -> {
            assertThat(s.memoryChunks()).isEqualTo(StoreMap.RECENT * 3);
            assertThat(s.diskChunks()).isEqualTo(1);
        });
        assertThat(map.recentKey("elsewhere:1", Tier.MEMORY, null)).isNull();
    }
}
