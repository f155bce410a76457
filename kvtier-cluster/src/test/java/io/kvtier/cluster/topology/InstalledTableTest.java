package io.kvtier.cluster.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cluster.Member;
import io.kvtier.cluster.Placement;
import io.kvtier.cluster.SlotTable;
import java.util.List;
import org.junit.jupiter.api.Test;

class InstalledTableTest {
    private static final List<Member> TWO = List.of(new Member("node-a", 1), new Member("node-b", 1));
    private static final List<Member> THREE =
            List.of(new Member("node-a", 1), new Member("node-b", 1), new Member("node-c", 1));

    @Test
    void startsWithAnEmptyUnownedEpochZeroTable() {
        InstalledTable installed = new InstalledTable();

        assertThat(installed.current().epoch()).isZero();
        assertThat(installed.current().isOwned()).isFalse();
        assertThat(installed.nextEpoch()).isEqualTo(1);
    }

    @Test
    void installsOnlyTablesOfAHigherEpoch() {
        InstalledTable installed = new InstalledTable();
        SlotTable five = Placement.compute(5, THREE, 1);

        assertThat(installed.offer(five)).isTrue();
        assertThat(installed.offer(Placement.compute(4, TWO, 1))).isFalse();
        assertThat(installed.offer(Placement.compute(5, TWO, 1))).isFalse();

        assertThat(installed.current()).isSameAs(five);
        assertThat(installed.staleCount()).isEqualTo(2);
        assertThat(installed.offer(Placement.compute(6, TWO, 1))).isTrue();
        assertThat(installed.current().members()).isEqualTo(TWO);
    }

    @Test
    void nextEpochIsAboveEveryEpochSeenEvenIfNotInstalled() {
        InstalledTable installed = new InstalledTable();
        installed.offer(Placement.compute(3, THREE, 1));

        installed.observe(9);
        installed.offer(Placement.compute(2, TWO, 1));

        assertThat(installed.current().epoch()).isEqualTo(3);
        assertThat(installed.maxSeenEpoch()).isEqualTo(9);
        assertThat(installed.nextEpoch()).isEqualTo(10);
    }
}
