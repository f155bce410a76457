package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * The {@code resp} L2 adapter of LMCache's multiprocess mode (docs/lmcache.md, "Multiprocess mode") against a real
 * kvtier node with a password: RESPL2AdapterConfig (lmcache/v1/distributed/l2_adapters/resp_l2_adapter.py, commit
 * 3ed2b130) builds the same C++ client as {@code resp://} ({@link LmcacheNativeRespClient}) and
 * NativeConnectorL2Adapter (native_connector_l2_adapter.py, commit 0b43a455) maps the L2 interface onto it: store =
 * batch SET, lookup-and-lock = batch EXISTS, load = batch GET, eviction = batch DEL. Keys are ObjectKeys
 * ({@code model@kv_rank 8 hex@group hex@chunk hash hex}), values whole 32 MiB objects, 8 workers (num_workers), each
 * connection opening with {@code AUTH} (username and password from the adapter's JSON, or the environment).
 */
class LmcacheMpRespAdapterIT {
    private static final String PASSWORD = "mp-secret";
    private static final int WORKERS = 8;
    private static final int OBJECTS = 8;

    @TempDir
    static Path tmp;
    static KvtierProcess node;

    @BeforeAll
    static void startNode() throws IOException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "512m", "--requirepass", PASSWORD);
    }

    @AfterAll
    static void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void storesLooksUpLoadsAndEvictsObjectsWithByteExactReplies() throws IOException {
        List<String> keys = keys("mp", 0, OBJECTS);
        List<String> lookup = new ArrayList<>(keys);
        lookup.addAll(keys("mp-never-stored", 0, 2));
        try (LmcacheNativeRespClient l2 = new LmcacheNativeRespClient(node.port(), WORKERS, "default", PASSWORD)) {
            l2.batchSet(keys, i -> Payloads.make(i, 5, LmcacheKeys.CHUNK_BYTES), LmcacheKeys.CHUNK_BYTES);

            boolean[] found = l2.batchExists(lookup);
            assertThat(found).containsExactly(true, true, true, true, true, true, true, true, false, false);

            long[] versions = new long[OBJECTS];
            boolean[] loaded = l2.batchGet(keys, LmcacheKeys.CHUNK_BYTES,
                    (i, chunk) -> versions[i] = Payloads.versionOf(i, chunk));
            assertThat(loaded).as("loads; failures %s", l2.loadFailures()).containsOnly(true);
            assertThat(versions).containsOnly(5L);

            List<String> evicted = keys.subList(0, 3);
            assertThat(l2.batchDelete(evicted)).as("DEL answers :1").containsOnly(true);
            assertThat(l2.batchDelete(evicted)).as("DEL of a deleted key answers :0").containsOnly(false);
            assertThat(l2.batchExists(keys)).containsExactly(false, false, false, true, true, true, true, true);
            assertThat(l2.connectionsOpened()).isEqualTo(WORKERS);
        }
        try (Jedis jedis = node.jedis(5_000)) {
            assertThat(jedis.keys(LmcacheKeys.MODEL + "@00000000@0@*")).hasSize(OBJECTS - 3);
        }
    }

    /** Without a username the client sends {@code AUTH password}; a wrong password fails the connection. */
    @Test
    void authenticatesWithAPasswordAloneAndRefusesAWrongOne() throws IOException {
        List<String> keys = keys("mp-rank1", 1, 1);
        try (LmcacheNativeRespClient l2 = new LmcacheNativeRespClient(node.port(), 1, "", PASSWORD)) {
            l2.batchSet(keys, i -> Payloads.make(50, 1, LmcacheKeys.CHUNK_BYTES), LmcacheKeys.CHUNK_BYTES);
            assertThat(l2.batchExists(keys)).containsExactly(true);
        }
        try (LmcacheNativeRespClient l2 = new LmcacheNativeRespClient(node.port(), 1, "", "wrong")) {
            assertThatThrownBy(() -> l2.batchExists(keys)).hasMessageContaining(
                    "AUTH failed: -WRONGPASS invalid username-password pair or user is disabled.");
        }
    }

    private static List<String> keys(String seed, int kvRank, int n) {
        return IntStream.range(0, n).mapToObj(i -> LmcacheKeys.mpKey(kvRank, 0, LmcacheKeys.chunkHashBytes(seed, i)))
                .toList();
    }
}
