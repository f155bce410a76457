package io.kvtier.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.events.StoreEvent;
import io.kvtier.router.map.StoreMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which chunks the kvtier policy asks the nodes to prefetch for the engine it chose. */
class StoreAwarePrefetchTest {
    private static StoreMap.Held on(String node, StoreEvent.Tier tier) {
        return new StoreMap.Held(node, tier, 1 << 20);
    }

    @Test
    void onlyChunksOnDiskBeyondTheEnginesGpuPrefixByNode() {
        List<String> keys = List.of("c0", "c1", "c2", "c3", "c4");
        List<StoreMap.Held> chunks = List.of(on("a", StoreEvent.Tier.DISK), on("a", StoreEvent.Tier.DISK),
                on("b", StoreEvent.Tier.MEMORY), on("b", StoreEvent.Tier.DISK), on("a", StoreEvent.Tier.DISK));
        // The GPU holds the first 20 tokens of chunks of 16: chunk 0 whole, chunk 1 in part (fetched, as LMCache does).
        Map<String, List<String>> prefetch = StoreAwarePolicy.prefetch(keys, chunks, 16, 20);
        assertThat(prefetch).containsOnlyKeys("a", "b");
        assertThat(prefetch.get("a")).containsExactly("c1kv_bytes", "c4kv_bytes");
        assertThat(prefetch.get("b")).containsExactly("c3kv_bytes");
        assertThat(StoreAwarePolicy.prefetch(keys, chunks, 16, 80)).as("all in the GPU").isEmpty();
        assertThat(StoreAwarePolicy.prefetch(keys, List.of(), 16, 0)).as("nothing in kvtier").isEmpty();
    }
}
