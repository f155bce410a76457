package io.kvtier.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.router.map.KvCacheMap;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RouterMetricsTest {
    @Test
    void scrapesDecisionsOutcomesAndTheMap() {
        KvCacheMap map = new KvCacheMap();
        map.addEngine("e9", "m"); // an engine of the map's own: the fleet's only one is down and has no entries
        map.stored("e9", "GPU", new long[] {1}, null, new int[16], 16, null, null);
        map.stored("e9", "GPU", new long[] {3}, 2L, new int[16], 16, null, null); // its parent never seen
        map.stored("e9", "CPU", new long[] {7}, null, new int[0], 0, null, null); // no GPU block of its hash
        try (Fleet fleet = new Fleet(List.of(EngineEndpoint.parse("http://127.0.0.1:1")), map, Duration.ofHours(1),
                Duration.ofMillis(100))) {
            RouterMetrics metrics = new RouterMetrics("prefix", fleet);
            metrics.decided("prefix: longest prefix");
            metrics.outcome("127.0.0.1:1", "ok");
            metrics.cached(96, 80);
            String text = metrics.scrape();
            assertThat(text).contains("kvtier_router_decisions_total{policy=\"prefix\",reason=\"prefix: longest prefix\"} 1.0")
                    .contains("kvtier_router_requests_total{engine=\"127.0.0.1:1\",outcome=\"ok\"} 1.0")
                    .contains("kvtier_router_predicted_cached_tokens_total 96.0")
                    .contains("kvtier_router_cached_tokens_total 80.0")
                    .contains("kvtier_map_blocks{engine=\"e9\",medium=\"GPU\"} 1.0")
                    .contains("kvtier_map_orphan_blocks{engine=\"e9\"} 2.0")
                    .contains("kvtier_router_engine_up{engine=\"127.0.0.1:1\"} 0.0");
        }
    }
}
