package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code redis-cluster://} remote connector of LMCache (docs/lmcache.md, "redis-cluster://") against a real
 * three-node kvtier cluster with one backup per slot: {@code lmcache_connector_replay.py --mode redis-cluster}
 * replays RedisClusterConnector (lmcache/v1/storage_backend/connector/redis_connector.py, commit 030c7718 and later)
 * with redis-py's asyncio RedisCluster built from every host in the URL, max_connections 150: the same commands as
 * {@code redis://}, each routed to its key's primary. A chunk's kv_bytes and metadata keys hash to different slots
 * (no hash tag), so they usually live on different nodes.
 */
class LmcacheRedisClusterConnectorIT {
    /**
     * The guide's multi-node setting. A 32 MiB chunk's replication to its backup is one peer call; with the default
     * 1 s and a few chunks stored at once on a loaded machine, it can time out and the write answer -UNREPLICATED.
     */
    static final String PEER_TIMEOUT = "10s";

    @TempDir
    static Path tmp;
    static TestCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = TestCluster.startWith(tmp, 3, 0, i -> List.of("--memory", "256m", "--peer-timeout", PEER_TIMEOUT));
    }

    @AfterAll
    static void killCluster() throws InterruptedException {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void redisClusterUrlConnectorStoresFindsAndLoadsEveryChunkByteForByte() throws Exception {
        ReplaySummary s = ReplaySummary.run(LmcacheRedisConnectorIT.SCRIPT, "--mode", "redis-cluster",
                "--port", port(0), "--port", port(1), "--port", port(2));
        s.assertConnectorSequence(false);
        long keys = 0;
        long copies = 0;
        for (KvtierProcess n : cluster.nodes) {
            try (var jedis = n.jedis(5_000)) {
                keys += jedis.dbSize(); // the node's primary keys
                String db0 = jedis.info("keyspace").lines().filter(l -> l.startsWith("db0:")).findFirst()
                        .orElse("db0:keys=0");
                copies += Long.parseLong(db0.substring("db0:keys=".length(), db0.indexOf(',') < 0 ? db0.length()
                        : db0.indexOf(','))); // every copy it holds, backups too
            }
        }
        assertThat(keys).as("each key counted once, by its primary").isEqualTo(2 * ReplaySummary.STORED - 2);
        assertThat(copies).as("each key on its primary and one backup").isEqualTo(2 * keys);
    }

    private static String port(int i) {
        return Integer.toString(cluster.nodes.get(i).port());
    }
}
