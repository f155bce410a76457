package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * The KV-cache layer on a real node: LMCache chunks written as LMCache's redis:// connector writes them (kv_bytes,
 * then metadata), a disk tier too small for them all, and the per-model statistics, prefix lookups and pins that
 * operators and connectors see.
 */
class KvCacheIT {
    private static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";

    @TempDir
    Path tmp;

    private static String chunk(String model, int i) {
        return model + "@1@0@" + Long.toHexString(0x9e3779b97f4a7c15L * (i + 1)) + "@bfloat16";
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] payload(int i, int length) {
        byte[] b = new byte[length];
        Arrays.fill(b, (byte) (i * 31 + 7));
        b[0] = (byte) i;
        b[length - 1] = (byte) (i >> 8);
        return b;
    }

    @Test
    void evictionNeverLeavesAMetadataKeyWhoseKvBytesIsGone() throws Exception {
        int chunks = 160;
        int size = 1 << 20;
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("n"), "--memory", "16m", "--disk", "64m");
             Jedis j = node.jedis(30_000)) {
            for (int i = 0; i < chunks; i++) { // 160 MiB of chunks into 16 MiB of memory and 64 MiB of disk
                assertThat(j.set(bytes(chunk(MODEL, i) + "kv_bytes"), payload(i, size))).isEqualTo("OK");
                assertThat(j.set(bytes(chunk(MODEL, i) + "metadata"), bytes("meta-" + i))).isEqualTo("OK");
            }
            // Demotion and region eviction run on after the last write: wait until no half chunk is left and the
            // count of chunks holds still, then check every chunk as LMCache's lookup and retrieval see it.
            long deadline = System.nanoTime() + 20_000_000_000L;
            List<String> orphans = halfChunks(j);
            long chunksHeld = -1;
            while (System.nanoTime() < deadline) {
                Thread.sleep(200);
                long now = countKvBytes(j);
                List<String> again = halfChunks(j);
                if (again.isEmpty() && now == chunksHeld) {
                    orphans = again;
                    break;
                }
                orphans = again;
                chunksHeld = now;
            }
            assertThat(orphans).as("halves of chunks left without the other").isEmpty();
            long present = 0;
            for (int i = 0; i < chunks; i++) { // EXISTS metadata, then GET metadata and GET kv_bytes
                if (j.exists(chunk(MODEL, i) + "metadata")) {
                    assertThat(j.get(bytes(chunk(MODEL, i) + "metadata"))).isEqualTo(bytes("meta-" + i));
                    assertThat(j.get(bytes(chunk(MODEL, i) + "kv_bytes"))).as("kv_bytes of chunk " + i)
                            .isEqualTo(payload(i, size));
                    present++;
                }
            }
            assertThat(present).as("chunks still held").isEqualTo(chunksHeld).isBetween(20L, chunks - 40L);
            String info = j.info("kvcache");
            System.out.println(info);
            assertThat(field(info, "kvcache_companion_deletes")).isPositive();
            assertThat(info).contains("model_0:name=" + MODEL + ",chunks=" + present + ",keys=" + 2 * present);
            assertThat(info).containsPattern("lost_chunks=[1-9]");
        }
    }

    private static long countKvBytes(Jedis j) {
        return allKeys(j).stream().filter(k -> k.endsWith("kv_bytes")).count();
    }

    private static Set<String> allKeys(Jedis j) {
        Set<String> keys = new HashSet<>();
        String cursor = ScanParams.SCAN_POINTER_START;
        do {
            ScanResult<String> page = j.scan(cursor, new ScanParams().count(1000));
            keys.addAll(page.getResult());
            cursor = page.getCursor();
        } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
        return keys;
    }

    /** Halves of chunks whose other half is absent, found by SCAN (which the read rule does not filter). */
    private static List<String> halfChunks(Jedis j) {
        Set<String> keys = allKeys(j);
        List<String> orphans = new ArrayList<>();
        for (String k : keys) {
            if (k.endsWith("metadata") && !keys.contains(k.substring(0, k.length() - 8) + "kv_bytes")
                    || k.endsWith("kv_bytes") && !keys.contains(k.substring(0, k.length() - 8) + "metadata")) {
                orphans.add(k);
            }
        }
        return orphans;
    }

    @Test
    void prefixAndLookupAnswerAPromptsChunksInOneCall() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("n"), "--memory", "16m", "--disk", "256m");
             Jedis j = node.jedis(30_000)) {
            String[] prompt = new String[10];
            for (int i = 0; i < prompt.length; i++) {
                prompt[i] = chunk("qwen3-8b", i);
                j.set(bytes(prompt[i]), payload(i, 1 << 20));
            }
            for (int i = 0; i < 40; i++) { // 40 MiB more: the prompt's chunks are demoted to disk
                j.set(bytes(chunk("other", i)), payload(i, 1 << 20));
            }
            j.del(prompt[6]);

            assertThat(j.sendCommand(() -> bytes("KVC.PREFIX"), prompt)).isEqualTo(6L);
            assertThat(j.sendCommand(() -> bytes("KVC.PREFIX"), "absent", prompt[0])).isEqualTo(0L);
            @SuppressWarnings("unchecked")
            List<Object> tiers = (List<Object>) j.sendCommand(() -> bytes("KVC.LOOKUP"), prompt[0], prompt[6],
                    chunk("other", 39));
            assertThat(tiers).hasSize(3);
            assertThat(new String((byte[]) tiers.get(0))).isEqualTo("disk");
            assertThat(tiers.get(1)).isNull();
            assertThat(new String((byte[]) tiers.get(2))).isEqualTo("memory");
            assertThatThrownBy(() -> j.sendCommand(() -> bytes("KVC.PREFIX")))
                    .isInstanceOf(JedisDataException.class).hasMessageContaining("wrong number of arguments");

            String info = j.info("kvcache");
            // Probes: 10 + 2 + 3 keys: 8 hits (6 + 1 + the two present), 3 misses; disk and memory told apart.
            assertThat(info).contains("name=qwen3-8b,chunks=9,keys=9,bytes=" + 9 * (1 << 20));
            assertThat(info).containsPattern("name=qwen3-8b,[^\\r]*hits_disk=7,misses=2");
        }
    }

    @Test
    void pinnedPromptStaysInMemoryWithinItsBudget() throws Exception {
        int metricsPort = KvtierProcess.freePort();
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("n"), "--memory", "32m", "--disk", "256m",
                "--pin-share", "0.25", "--metrics-port", Integer.toString(metricsPort));
             Jedis j = node.jedis(30_000)) {
            String system = chunk(MODEL, 0);
            j.set(bytes(system), payload(0, 4 << 20));
            j.set(bytes("cold"), payload(1, 4 << 20));
            j.set(bytes("big"), payload(2, 5 << 20));
            assertThat(j.sendCommand(() -> bytes("KVC.PIN"), system)).isEqualTo(1L);
            assertThat(j.sendCommand(() -> bytes("KVC.PIN"), "missing")).isEqualTo(0L);
            assertThatThrownBy(() -> j.sendCommand(() -> bytes("KVC.PIN"), "big"))
                    .isInstanceOf(JedisDataException.class).hasMessageStartingWith("PINFULL")
                    .hasMessageContaining("4194304 of 8388608 bytes pinned");
            assertThatThrownBy(() -> j.sendCommand(() -> bytes("KVC.PIN"), "cold", "0"))
                    .isInstanceOf(JedisDataException.class).hasMessageContaining("invalid ttl");

            fill(j, "fill-a", 96);
            assertThat(lookup(j, system)).isEqualTo("memory");
            assertThat(lookup(j, "cold")).isEqualTo("disk");
            assertThat(j.get(bytes(system))).isEqualTo(payload(0, 4 << 20));

            assertThat(j.sendCommand(() -> bytes("KVC.PIN"), "cold", "1")).as("a disk-resident key").isEqualTo(1L);
            assertThat(lookup(j, "cold")).as("read back into memory by the pin").isEqualTo("memory");
            assertThat(j.info("kvcache")).contains("pinned_keys:2", "pinned_bytes:" + (8 << 20),
                    "pin_budget_bytes:" + (8 << 20));
            Thread.sleep(1_500);
            assertThat(j.info("kvcache")).as("the pin of 'cold' ended after 1 s").contains("pinned_keys:1");

            assertThat(j.sendCommand(() -> bytes("KVC.UNPIN"), system)).isEqualTo(1L);
            assertThat(j.sendCommand(() -> bytes("KVC.UNPIN"), system)).isEqualTo(0L);
            fill(j, "fill-b", 96);
            assertThat(lookup(j, system)).as("unpinned, it is demoted like any other").isEqualTo("disk");

            String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + metricsPort + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).contains("kvtier_kvcache_chunks{model=\"" + MODEL + "\"} 1")
                    .contains("kvtier_pinned_bytes 0");
        }
    }

    private static void fill(Jedis j, String prefix, int mib) {
        for (int i = 0; i < mib; i++) {
            j.set(bytes(prefix + i), payload(i, 1 << 20));
        }
    }

    private static String lookup(Jedis j, String key) {
        @SuppressWarnings("unchecked")
        List<Object> r = (List<Object>) j.sendCommand(() -> bytes("KVC.LOOKUP"), key);
        return r.get(0) == null ? null : new String((byte[]) r.get(0), StandardCharsets.UTF_8);
    }

    private static long field(String info, String name) {
        for (String line : info.split("\r\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError("no " + name + " in " + info);
    }

    /**
     * KVC.PREFETCH against a real node: chunks pushed to disk come back to memory before they are read, counted in
     * INFO kvcache as prefetched and then used; missing keys and keys in memory cost nothing.
     */
    @Test
    void prefetchBringsDiskChunksBackToMemoryBeforeTheirRead() throws Exception {
        int size = 2 << 20;
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("p"), "--memory", "64m", "--disk", "512m");
             Jedis j = node.jedis(30_000)) {
            for (int i = 0; i < 80; i++) { // 160 MiB through 64 MiB of memory: the first chunks go to disk
                assertThat(j.set(bytes(chunk(MODEL, i) + "kv_bytes"), payload(i, size))).isEqualTo("OK");
            }
            List<byte[]> cold = new ArrayList<>();
            List<Integer> coldIndexes = new ArrayList<>();
            for (int i = 0; i < 80 && cold.size() < 3; i++) {
                byte[] k = bytes(chunk(MODEL, i) + "kv_bytes");
                if ("disk".equals(lookup(j, k))) {
                    cold.add(k);
                    coldIndexes.add(i);
                }
            }
            assertThat(cold).as("chunks on disk").hasSize(3);
            for (int i = 40; i < 80; i++) { // room for them: the newest chunks leave
                j.del(bytes(chunk(MODEL, i) + "kv_bytes"));
            }
            List<byte[]> args = new ArrayList<>(cold);
            args.add(bytes("no-such-chunk"));
            Object queued = j.sendCommand(() -> bytes("KVC.PREFETCH"), args.toArray(new byte[0][]));
            assertThat(queued).isEqualTo(4L);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (cold.stream().anyMatch(k -> !"memory".equals(lookup(j, k))) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(cold).allMatch(k -> "memory".equals(lookup(j, k)));
            for (int c = 0; c < cold.size(); c++) {
                assertThat(j.get(cold.get(c))).isEqualTo(payload(coldIndexes.get(c), size));
            }
            String info = j.info("kvcache");
            assertThat(info).contains("kvcache_prefetch_requested:4").contains("kvcache_prefetched:3")
                    .contains("kvcache_prefetch_used:3").contains("kvcache_prefetch_not_prefetched:1");
            assertThatThrownBy(() -> j.sendCommand(() -> bytes("KVC.PREFETCH")))
                    .isInstanceOf(JedisDataException.class).hasMessageContaining("wrong number of arguments");
        }
    }

    private static String lookup(Jedis j, byte[] key) {
        List<?> r = (List<?>) j.sendCommand(() -> bytes("KVC.LOOKUP"), key);
        return r.getFirst() == null ? null : new String((byte[]) r.getFirst(), StandardCharsets.UTF_8);
    }
}
