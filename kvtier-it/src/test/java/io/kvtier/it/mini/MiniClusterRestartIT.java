package io.kvtier.it.mini;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
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
