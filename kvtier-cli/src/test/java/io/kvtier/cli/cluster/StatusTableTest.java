package io.kvtier.cli.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatusTableTest {
    @Test
    void printsTheSummaryAndOneAlignedRowPerMemberWithItsShare() {
        String out = StatusTable.format(ClusterInfo.parse(InfoSamples.importing()), "127.0.0.1:7304");
        assertThat(out).startsWith("kvtier cluster, as node n4 (127.0.0.1:7304) sees it\n")
                .contains("  state        ok, serving\n")
                .contains("  epoch        6\n")
                .contains("  members      4, 16384 of 16384 slots have a primary\n")
                .contains("  this node    4141 slots primary, 8242 owned, 8242 importing\n")
                .contains("  replication  sync, 1 backup per slot\n")
                .contains("  lag          3 writes not yet on every backup (4 calls, 12.0 KiB in flight), oldest "
                        + "130 ms\n")
                .contains("  rebalancing  copying at epoch 6, pass 1 of 2: 2793 of 8242 slots copied, 0 done, from "
                        + "3 sources; 3,569 keys (13.9 MiB) in 14.8 s, 967.7 KiB/s\n")
                .contains("               started 2026-11-23T02:13:20Z, limit 1.0 MiB/s\n")
                .contains("  traffic      since start: 1,234 replicated (1 failed), 9,999 forwarded (3 failed), 0 "
                        + "moved,\n");
        List<String> table = out.lines().dropWhile(l -> !l.startsWith("  MEMBER")).toList();
        assertThat(table).containsExactly(
                "  MEMBER  ENDPOINT        WEIGHT  PRIMARY          OWNED",
                "  n1      127.0.0.1:7301     576     4104   25.0%   8238   25.1%",
                "  n2      127.0.0.1:7302     576     4044   24.7%   8089   24.7%",
                "  n3      127.0.0.1:7303     576     4095   25.0%   8199   25.0%",
                "  n4 *    127.0.0.1:7304     576     4141   25.3%   8242   25.2%",
                "  total                             16384  100.0%  32768  100.0%");
    }

    @Test
    void saysWhyANodeIsNotServing() {
        String out = StatusTable.format(ClusterInfo.parse(InfoSamples.downWithColonIds()), "10.0.0.1:6379");
        assertThat(out).contains("  state        fail, NOT serving: this node sees 1 of the 3 members it last "
                        + "served with (a minority)\n")
                .contains("  replication  async, 1 backup per slot\n")
                .contains("  rebalancing  not reported by this node\n")
                .contains("  10.0.0.1:6379 *  10.0.0.1:6379");
    }

    @Test
    void describesEachRebalancingState() {
        assertThat(StatusTable.rebalance(rebalance("idle", 0, 0))).isEqualTo(
                "idle: nothing imported since the node started (limit 256.0 MiB/s)");
        assertThat(StatusTable.rebalance(rebalance("waiting", 0, 0))).isEqualTo(
                "waiting at epoch 7 for the members to say who holds each of 100 slots");
        assertThat(StatusTable.rebalance(rebalance("done", 100, 100))).isEqualTo(
                "done at epoch 7: 100 slots from 1 source; 1,000 keys (1.0 MiB) in 2.0 s, 512.0 KiB/s");
        assertThat(StatusTable.rebalance(rebalance("superseded", 40, 30))).isEqualTo(
                "superseded at epoch 7 by a newer table after 30 of 100 slots; 1,000 keys (1.0 MiB) in 2.0 s, "
                        + "512.0 KiB/s");
    }

    @Test
    void withEveryMemberAddsTheirOwnViewAndNamesTheUnreachable() {
        ClusterInfo n4 = ClusterInfo.parse(InfoSamples.importing());
        String n1Text = InfoSamples.importing().replace("kvtier_node_id:n4", "kvtier_node_id:n1")
                .replace("kvtier_slots_importing:8242", "kvtier_slots_importing:0")
                .replace("kvtier_rebalance_state:copying", "kvtier_rebalance_state:done");
        List<NodeQuery.NodeReport> others = List.of(
                new NodeQuery.NodeReport("n1", "127.0.0.1:7301", ClusterInfo.parse(n1Text), null),
                new NodeQuery.NodeReport("n2", "127.0.0.1:7302", null, "cannot reach 127.0.0.1:7302: refused"));
        List<String> table = StatusTable.format(n4, "127.0.0.1:7304", others).lines()
                .dropWhile(l -> !l.startsWith("  NODE")).toList();
        assertThat(table).hasSize(4);
        assertThat(table.get(0)).startsWith("  NODE  EPOCH  SERVING      IMPORTING  LAG");
        assertThat(table.get(1)).startsWith("  n4 *      6  yes               8242  3 writes, 130 ms  "
                + "copying at epoch 6");
        assertThat(table.get(2)).startsWith("  n1        6  yes                  0  3 writes, 130 ms  done at epoch 6");
        assertThat(table.get(3)).isEqualTo("  n2        -  unreachable                               "
                + "cannot reach 127.0.0.1:7302: refused");
    }

    @Test
    void printsSizesAndDurationsForPeople() {
        assertThat(StatusTable.bytes(0)).isEqualTo("0 B");
        assertThat(StatusTable.bytes(1023)).isEqualTo("1023 B");
        assertThat(StatusTable.bytes(1536)).isEqualTo("1.5 KiB");
        assertThat(StatusTable.bytes(256L << 20)).isEqualTo("256.0 MiB");
        assertThat(StatusTable.bytes(3L << 40)).isEqualTo("3.0 TiB");
        assertThat(StatusTable.millis(850)).isEqualTo("850 ms");
        assertThat(StatusTable.millis(3_240)).isEqualTo("3.2 s");
        assertThat(StatusTable.millis(250_000)).isEqualTo("4 min 10 s");
    }

    private static ClusterInfo.Rebalance rebalance(String state, int copied, int done) {
        return new ClusterInfo.Rebalance(state, 7, 100, copied, done, 1, 0, 1000, 1000, 1 << 20, 1, 2_000,
                256L << 20);
    }
}
