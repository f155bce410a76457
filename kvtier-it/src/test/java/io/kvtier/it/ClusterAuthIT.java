package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A cluster whose nodes share a --requirepass: nodes authenticate their connections to each other, so state transfer,
 * proxying and replication work, while a client without the password is refused.
 */
class ClusterAuthIT {
    private static final String PASSWORD = "kvtier-test-secret";

    @TempDir
    Path tmp;

    @Test
    void nodesWithAPasswordAuthenticateToEachOther() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 3, 1, i -> List.of("--requirepass", PASSWORD))) {
            KvtierProcess entry = cluster.nodes.get(0);
            try (Jedis j = entry.jedis(10_000)) {
                for (int i = 0; i < 100; i++) {
                    assertThat(j.set("auth" + i, "v" + i)).as("proxied and replicated").isEqualTo("OK");
                }
            }
            cluster.addWith(List.of("--requirepass", PASSWORD));
            cluster.awaitAgreement(4, 60_000); // the fourth node imported its slots from the others
            for (KvtierProcess node : cluster.nodes) {
                try (Jedis j = node.jedis(10_000)) {
                    for (int i = 0; i < 100; i++) {
                        assertThat(j.get("auth" + i)).as("auth" + i + " through " + node.port()).isEqualTo("v" + i);
                    }
                }
            }
            try (Jedis anonymous = new Jedis("127.0.0.1", entry.port(), 10_000)) {
                assertThatThrownBy(() -> anonymous.get("auth0")).isInstanceOf(JedisDataException.class)
                        .hasMessageStartingWith("NOAUTH");
            }
        }
    }
}
