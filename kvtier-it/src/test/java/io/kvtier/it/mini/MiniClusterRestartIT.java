package io.kvtier.it.mini;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/** Restarts of a whole cluster and of single nodes keep what the nodes hold on disk (issue 28). */
class MiniClusterRestartIT {
    @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
    Path tmp;

    @Test
    void aFullGracefulRestartKeepsEveryAcknowledgedKey() throws Exception {
        try (MiniCluster c = MiniCluster.start(tmp, 3)) {
            Map<String, String> written = write(c, 3_000);
            for (MiniCluster.Node n : c.nodes()) {
                c.stop(n);
            }
            long start = System.nanoTime();
            for (MiniCluster.Node n : c.nodes()) {
                Thread.ofPlatform().daemon().start(() -> c.restart(n));
            }
            long agreed = c.awaitAgreement(3, 60_000);
            System.out.printf("full restart: agreement %d ms after the restarts began%n", agreed);
            assertAllReadable(c, written);
            System.out.printf("full restart: %d/%d keys read back, full service %d ms after the restarts began%n",
                    written.size(), written.size(), (System.nanoTime() - start) / 1_000_000);
        }
    }

    @Test
    void afterKillingEveryNodeTheLossIsAcceptedAndEveryValueThatReachedADiskReadsBack() throws Exception {
        MiniCluster.Settings small = MiniCluster.Settings.defaults().withMemory(8L << 20);
        try (MiniCluster c = MiniCluster.start(tmp, 3, small)) {
            Map<String, String> written = new HashMap<>();
            String filler = "x".repeat(16 * 1024);
            try (Jedis j = c.node(0).jedis()) {
                for (int i = 0; i < 1_500; i++) {
                    String v = i + "-" + filler;
                    assertThat(j.set("k" + i, v)).isEqualTo("OK");
                    written.put("k" + i, v);
                }
            }
            Map<String, String> onDisk = new HashMap<>();
            for (Map.Entry<String, String> e : written.entrySet()) {
                byte[] key = e.getKey().getBytes(java.nio.charset.StandardCharsets.UTF_8);
                if (c.running().stream().anyMatch(n -> n.server().context().store().onDisk(key))) {
                    onDisk.put(e.getKey(), e.getValue());
                }
            }
            for (MiniCluster.Node n : c.nodes()) {
                c.kill(n);
            }
            long start = System.nanoTime();
            for (MiniCluster.Node n : c.nodes()) {
                Thread.ofPlatform().daemon().start(() -> c.restart(n));
            }
            // Every copy came from an unclean stop: nothing is complete, every slot waits for an operator.
            String waiting = awaitWaiting(c, 60_000);
            long epoch = Long.parseLong(MiniCluster.status(c.node(0)).get("cluster_current_epoch"));
            try (Jedis j = c.node(0).jedis()) {
                List<byte[]> args = new java.util.ArrayList<>(List.of(Long.toString(epoch).getBytes()));
                for (String r : waiting.split(",")) {
                    args.add(r.getBytes());
                }
                assertThat(j.sendCommand(() -> "KVT.ACCEPTLOSS".getBytes(), args.toArray(byte[][]::new)))
                        .isEqualTo(1L);
            }
            c.awaitAgreement(3, 60_000);
            long served = (System.nanoTime() - start) / 1_000_000;
            int back = 0;
            int lost = 0;
            try (Jedis j = c.node(0).jedis()) {
                for (Map.Entry<String, String> e : written.entrySet()) {
                    String got = j.get(e.getKey());
                    if (onDisk.containsKey(e.getKey())) {
                        assertThat(got).as("%s reached a disk before the kill", e.getKey()).isEqualTo(e.getValue());
                    }
                    if (got != null) {
                        assertThat(got).isEqualTo(e.getValue());
                        back++;
                    } else {
                        lost++;
                    }
                }
            }
            long stated = c.running().stream().mapToLong(n -> n.server().context().store().lostAtCrashKeys()).sum();
            System.out.printf("kill -9 of every node: %d of %d keys had reached a disk; %d read back, %d lost "
                    + "(the nodes said up to %d values were only in memory); full service %d ms after the restarts%n",
                    onDisk.size(), written.size(), back, lost, stated, served);
            assertThat(back).isGreaterThanOrEqualTo(onDisk.size());
            assertThat(stated).as("the loss is stated").isGreaterThanOrEqualTo(lost);
        }
    }

    /** Waits until some node reports slots waiting for a complete copy and returns every node's ranges joined. */
    static String awaitWaiting(MiniCluster c, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (System.nanoTime() < deadline) {
            try {
                List<String> ranges = c.running().stream().map(n -> MiniCluster.status(n).get("kvtier_slots_waiting"))
                        .filter(r -> r != null && !r.isEmpty()).toList();
                int members = c.running().stream().mapToInt(n -> Integer.parseInt(MiniCluster.status(n)
                        .get("cluster_known_nodes"))).min().orElse(0);
                if (!ranges.isEmpty() && members == c.nodes().size()) {
                    return String.join(",", ranges);
                }
            } catch (RuntimeException notYet) {
                // a node still starting
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no node reported slots waiting for a copy within " + timeoutMillis + " ms");
    }

    static Map<String, String> write(MiniCluster c, int keys) {
        Map<String, String> written = new HashMap<>();
        try (Jedis j = c.node(0).jedis()) {
            for (int i = 0; i < keys; i++) {
                String k = "key-" + i;
                String v = "value-" + i + "-" + System.nanoTime();
                assertThat(j.set(k, v)).isEqualTo("OK");
                written.put(k, v);
            }
        }
        return written;
    }

    static void assertAllReadable(MiniCluster c, Map<String, String> written) {
        try (Jedis j = c.running().get(0).jedis()) {
            for (Map.Entry<String, String> e : written.entrySet()) {
                assertThat(j.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
            }
        }
    }
}
