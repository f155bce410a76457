package io.kvtier.client.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ConnectionSharesTest {
    @Test
    void sixteenConnectionsOverThreeNodesAreSixFiveFive() {
        assertThat(IntStream.range(0, 3).map(i -> ConnectionShares.share(16, 3, i)).toArray()).containsExactly(6, 5, 5);
    }

    @Test
    void sharesAddUpToTheTotalWheneverThereAreEnoughConnections() {
        for (int total = 1; total <= 64; total++) {
            for (int nodes = 1; nodes <= total; nodes++) {
                int t = total;
                int n = nodes;
                assertThat(IntStream.range(0, n).map(i -> ConnectionShares.share(t, n, i)).sum())
                        .as("%d over %d", t, n).isEqualTo(t);
            }
        }
    }

    @Test
    void everyNodeGetsAConnectionEvenWhenThereAreFewerThanNodes() {
        assertThat(IntStream.range(0, 3).map(i -> ConnectionShares.share(2, 3, i)).toArray()).containsExactly(1, 1, 1);
    }

    @Test
    void aNodeThatAppearsLaterGetsTheRoundedUpShare() {
        assertThat(ConnectionShares.shareOfNewcomer(16, 3)).isEqualTo(6);
        assertThat(ConnectionShares.shareOfNewcomer(16, 4)).isEqualTo(4);
        assertThat(ConnectionShares.shareOfNewcomer(1, 4)).isEqualTo(1);
    }

    @Test
    void lanesUseTheirNodesConnectionsInTurn() {
        assertThat(IntStream.range(0, 7).map(lane -> ConnectionShares.connectionFor(lane, 3)).toArray())
                .containsExactly(0, 1, 2, 0, 1, 2, 0);
    }

    @Test
    void nonsenseCountsAreRefused() {
        assertThatThrownBy(() -> ConnectionShares.share(0, 3, 0)).hasMessageContaining("0 connections over 3 nodes");
        assertThatThrownBy(() -> ConnectionShares.share(4, 3, 3)).hasMessageContaining("node index 3");
        assertThatThrownBy(() -> ConnectionShares.connectionFor(1, 0)).hasMessageContaining("at least one connection");
    }
}
