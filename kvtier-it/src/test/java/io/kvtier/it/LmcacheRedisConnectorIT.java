package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * The {@code redis://} remote connector of LMCache (docs/lmcache.md, "redis://") against a real kvtier node with a
 * password: {@code lmcache_connector_replay.py --mode redis} replays RedisConnector
 * (lmcache/v1/storage_backend/connector/redis_connector.py, commit 030c7718 and later) with redis-py's asyncio client,
 * call for call: a pool of 150 connections per worker from the {@code remote_url} as given
 * ({@code redis://:PASSWORD@host:port}), SET kv_bytes then SET metadata per chunk under gather, the EXISTS prefix walk,
 * GET metadata then GET kv_bytes, and a chunk whose kv_bytes is deleted (its metadata goes with it: companion fate). Three workers at once (one TP 1
 * engine with 32 MiB chunks and an unfull 100-token chunk, two TP 2 workers with 16 MiB chunks), 237 MiB in all,
 * more than the node's 128 MiB memory tier.
 */
class LmcacheRedisConnectorIT {
    static final Path SCRIPT = KvtierProcess.ROOT.resolve("kvtier-it/src/test/python/lmcache_connector_replay.py");
    private static final String PASSWORD = "lmcache-secret";

    @TempDir
    static Path tmp;
    static KvtierProcess node;

    @BeforeAll
    static void startNode() throws IOException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "128m", "--requirepass", PASSWORD);
    }

    @AfterAll
    static void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void redisUrlConnectorStoresFindsAndLoadsEveryChunkByteForByte() throws IOException, InterruptedException {
        ReplaySummary s = ReplaySummary.run(SCRIPT, "--mode", "redis", "--port", Integer.toString(node.port()),
                "--password", PASSWORD);
        s.assertConnectorSequence(true);
        try (Jedis jedis = node.jedis(5_000)) {
            // 11 chunks stored as kv_bytes + metadata; one lost its kv_bytes, and with it its metadata
            assertThat(jedis.dbSize()).isEqualTo(2 * 11 - 2);
            assertThat(LmcacheRespConnectorIT.info(jedis.info("tiers"), "disk_hits")).as("loads from disk")
                    .isPositive();
        }
    }
}
