package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * The {@code resp://} remote connector of LMCache (docs/lmcache.md, "resp://") against a real kvtier node, on the
 * wire exactly as its native client talks: RESPConnector and RESPConnectorAdapter
 * (lmcache/v1/storage_backend/connector/redis_connector.py and redis_adapter.py) hand whole batches to the C++
 * client of csrc/storage_backends/redis/connector.cpp (commit 2827f8e8), replayed by {@link LmcacheNativeRespClient}:
 * one key per chunk (save_chunk_meta: False, so no metadata key), every value exactly one full chunk (32 MiB for
 * Llama-3.1-8B), 8 connections (resp_num_threads), one command in flight per connection, replies matched byte for
 * byte. The node's memory tier holds half the chunks, so loads come from both tiers.
 */
class LmcacheRespConnectorIT {
    private static final int WORKERS = 8;
    private static final int CHUNKS = 16;
    private static final int UNKNOWN = 4;

    @TempDir
    static Path tmp;
    static KvtierProcess node;

    @BeforeAll
    static void startNode() throws IOException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "256m");
    }

    @AfterAll
    static void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void storesLooksUpAndLoadsOneKeyPerChunkWithByteExactReplies() throws IOException {
        List<String> keys = keys("resp", CHUNKS);
        List<String> unknown = keys("resp-never-stored", UNKNOWN);
        List<String> lookup = new ArrayList<>(keys);
        lookup.addAll(unknown);
        long keysBefore = dbsize();
        try (LmcacheNativeRespClient client = new LmcacheNativeRespClient(node.port(), WORKERS, "", "")) {
            assertThat(client.batchExists(keys)).as("nothing stored yet").containsOnly(false);

            client.batchSet(keys, i -> Payloads.make(i, 1, LmcacheKeys.CHUNK_BYTES), LmcacheKeys.CHUNK_BYTES);

            boolean[] found = client.batchExists(lookup);
            assertThat(prefixHits(found)).as("batched_async_contains: stored prefix").isEqualTo(CHUNKS);
            assertThat(IntStream.range(CHUNKS, lookup.size()).filter(i -> found[i]).count()).isZero();

            long[] versions = new long[CHUNKS];
            boolean[] loaded = client.batchGet(keys, LmcacheKeys.CHUNK_BYTES,
                    (i, chunk) -> versions[i] = Payloads.versionOf(i, chunk));
            assertThat(loaded).as("loads; failures %s", client.loadFailures()).containsOnly(true);
            assertThat(versions).as("every chunk byte for byte").containsOnly(1L);

            boolean[] misses = client.batchGet(unknown, LmcacheKeys.CHUNK_BYTES, (i, chunk) -> { });
            assertThat(misses).containsOnly(false);
            assertThat(client.loadFailures()).as("a miss is $-1, which leaves the connection in step")
                    .hasSize(UNKNOWN).allMatch(f -> f.endsWith("key not found"));
            assertThat(client.batchExists(keys)).as("connections still in step after the misses").containsOnly(true);
            assertThat(client.connectionsOpened()).isEqualTo(WORKERS);
        }
        try (Jedis jedis = node.jedis(5_000)) {
            assertThat(jedis.dbSize() - keysBefore).as("one key per chunk").isEqualTo(CHUNKS);
            assertThat(jedis.keys("*")).as("no metadata or kv_bytes companions").containsAll(keys)
                    .noneMatch(k -> k.endsWith("metadata") || k.endsWith("kv_bytes"));
            assertThat(jedis.strlen(keys.get(0))).isEqualTo(LmcacheKeys.CHUNK_BYTES);
            String tiers = jedis.info("tiers");
            assertThat(info(tiers, "demotions")).as("chunks moved to disk").isPositive();
            assertThat(info(tiers, "disk_hits")).as("chunks loaded from disk").isPositive();
        }
    }

    /**
     * Stricter than the connector, which waits for each reply: a whole lookup tile and two loads written at once on
     * one connection get the same bytes, in order, with nothing in between.
     */
    @Test
    void answersAPipelinedTileWithTheSameBytes() throws IOException {
        List<String> keys = keys("resp-pipelined", 2);
        try (LmcacheNativeRespClient client = new LmcacheNativeRespClient(node.port(), WORKERS, "", "")) {
            client.batchSet(keys, i -> Payloads.make(100 + i, 3, LmcacheKeys.CHUNK_BYTES), LmcacheKeys.CHUNK_BYTES);
        }
        List<String> lookup = new ArrayList<>(keys);
        lookup.addAll(keys("resp-pipelined-never-stored", 14));
        ByteArrayOutputStream requests = new ByteArrayOutputStream();
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        for (String k : lookup) {
            requests.writeBytes(RawConnection.multibulk(List.of(ascii("EXISTS"), ascii(k))));
            expected.writeBytes(keys.contains(k) ? LmcacheNativeRespClient.ONE : LmcacheNativeRespClient.ZERO);
        }
        for (String k : keys) {
            requests.writeBytes(RawConnection.multibulk(List.of(ascii("GET"), ascii(k))));
        }
        try (Socket s = new Socket("127.0.0.1", node.port())) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write(requests.toByteArray());
            InputStream in = new BufferedInputStream(s.getInputStream());
            assertThat(LmcacheNativeRespClient.show(in.readNBytes(expected.size())))
                    .isEqualTo(LmcacheNativeRespClient.show(expected.toByteArray()));
            for (int i = 0; i < keys.size(); i++) {
                byte[] header = ascii("$" + LmcacheKeys.CHUNK_BYTES + "\r\n");
                assertThat(in.readNBytes(header.length)).isEqualTo(header);
                assertThat(Payloads.versionOf(100 + i, in.readNBytes(LmcacheKeys.CHUNK_BYTES))).isEqualTo(3);
                assertThat(in.readNBytes(2)).isEqualTo(ascii("\r\n"));
            }
            s.getOutputStream().write(ascii("PING\r\n"));
            assertThat(in.readNBytes(7)).as("nothing left over before the next reply").isEqualTo(ascii("+PONG\r\n"));
        }
    }

    private static long dbsize() {
        try (Jedis jedis = node.jedis(5_000)) {
            return jedis.dbSize();
        }
    }

    static List<String> keys(String seed, int n) {
        return IntStream.range(0, n).mapToObj(i -> LmcacheKeys.engineKey(1, 0, LmcacheKeys.chunkHash(seed, i)))
                .toList();
    }

    /** How batched_async_contains reads a batch's flags: the count of leading hits. */
    static int prefixHits(boolean[] found) {
        int n = 0;
        while (n < found.length && found[n]) {
            n++;
        }
        return n;
    }

    static long info(String info, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + ":(\\d+)\r?$").matcher(info);
        assertThat(m.find()).as("INFO has %s: %s", name, info).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
