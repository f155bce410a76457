package io.kvtier.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.load.Phase;
import org.junit.jupiter.api.Test;

class FailoverLoadTest {
    @Test
    void preloadAndFinalReadCoverEveryKeyOnce() {
        FailoverLoad load = new FailoverLoad(100, 1024, 50, 1);

        Phase preload = load.preload();
        Phase read = load.readAll();

        assertThat(preload.limit()).isEqualTo(new Limit.Requests(100));
        assertThat(read.limit()).isEqualTo(new Limit.Requests(100));
        assertThat(preload.ops()).containsExactly("SET");
        assertThat(read.ops()).containsExactly("GET");
    }

    @Test
    void theMixHasTheAskedShareOfWritesAndSpreadsOverTheKeys() {
        int writes = 0;
        java.util.Set<Long> keys = new java.util.HashSet<>();
        for (long i = 0; i < 100_000; i++) {
            long h = FailoverLoad.mix(7 ^ FailoverLoad.mix(i));
            keys.add(Math.floorMod(h, 1000L));
            writes += Math.floorMod(h >>> 32, 100L) < 30 ? 1 : 0;
        }

        assertThat(writes).isBetween(29_000, 31_000);
        assertThat(keys).hasSize(1000);
    }

    @Test
    void keysCarryTheirOwnPrefix() {
        assertThat(new String(FailoverLoad.key(42))).isEqualTo("kvtier-bench:failover:42");
    }
}
