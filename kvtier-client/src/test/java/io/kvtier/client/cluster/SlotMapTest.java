package io.kvtier.client.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.HostPort;
import io.kvtier.client.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlotMapTest {
    private static final HostPort A = new HostPort("127.0.0.1", 7001);
    private static final HostPort B = new HostPort("127.0.0.1", 7002);
    private static final HostPort C = new HostPort("127.0.0.1", 7003);

    @Test
    void installGivesEverySlotOfARangeItsPrimaryAndLeavesGapsUnassigned() {
        SlotMap map = new SlotMap();
        map.install(List.of(new SlotRange(0, 99, A, List.of(B)), new SlotRange(200, 16383, B, List.of())));

        assertThat(map.primary(0)).isEqualTo(A);
        assertThat(map.primary(99)).isEqualTo(A);
        assertThat(map.primary(100)).isNull();
        assertThat(map.primary(16383)).isEqualTo(B);
        assertThat(map.unassigned()).isEqualTo(100);
        assertThat(map.slotsOf(A).cardinality()).isEqualTo(100);
    }

    @Test
    void aNewInstallReplacesTheWholeMap() {
        SlotMap map = new SlotMap();
        map.install(List.of(new SlotRange(0, 16383, A, List.of())));
        map.install(List.of(new SlotRange(0, 8191, B, List.of()), new SlotRange(8192, 16383, C, List.of())));

        assertThat(map.primaries()).containsExactly(B, C);
        assertThat(map.slotsOf(A).isEmpty()).isTrue();
    }

    @Test
    void aRedirectMovesThatSlotOnly() {
        SlotMap map = new SlotMap();
        map.install(List.of(new SlotRange(0, 16383, A, List.of())));

        map.redirect(new ClusterError.Moved(42, C));

        assertThat(map.primary(42)).isEqualTo(C);
        assertThat(map.primary(41)).isEqualTo(A);
        assertThat(map.primary(43)).isEqualTo(A);
        assertThat(map.primaries()).containsExactly(A, C);
    }

    @Test
    void keysAreRoutedByTheirHashTag() {
        SlotMap map = new SlotMap();
        byte[] key = "{user1000}.following".getBytes(StandardCharsets.UTF_8);
        int slot = SlotHash.slot("user1000".getBytes(StandardCharsets.UTF_8));
        map.install(List.of(new SlotRange(slot, slot, C, List.of())));

        assertThat(map.primaryOf(key)).isEqualTo(C);
        assertThat(map.primaryOf("{user1000}.followers".getBytes(StandardCharsets.UTF_8))).isEqualTo(C);
    }

    @Test
    void primariesAreOrderedByHostThenPort() {
        SlotMap map = new SlotMap();
        map.install(List.of(new SlotRange(0, 10, C, List.of()), new SlotRange(11, 20, A, List.of()),
                new SlotRange(21, 16383, B, List.of())));

        assertThat(map.primaries()).containsExactly(A, B, C);
    }
}
