package io.kvtier.kvcache.key;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * LMCache's chunk keys computed here equal those of the reference: chains made by CPython's own {@code hash()} of
 * LMCache's tuple (builtin) and by SHA-256 over canonical CBOR (sha256_cbor), for several prompts and chunk sizes
 * (src/test/python/lmcache_key_vectors.py wrote the file).
 */
class LmcacheChunkKeysTest {
    private static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";

    record Case(String variant, long noneHash, int chunkSize, String tokens) {
    }

    @Test
    void keysMatchTheReferenceVectors() throws Exception {
        Map<Case, List<String[]>> cases = new LinkedHashMap<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                getClass().getResourceAsStream("/lmcache/chunk-keys.tsv"), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t");
                cases.computeIfAbsent(new Case(f[0], Long.parseLong(f[1]), Integer.parseInt(f[2]), f[3]),
                        c -> new ArrayList<>()).add(f);
            }
        }
        assertThat(cases).hasSize(10); // range255 has no full chunk
        int checked = 0;
        for (Map.Entry<Case, List<String[]>> e : cases.entrySet()) {
            Case c = e.getKey();
            LmcacheChunkKeys keys = new LmcacheChunkKeys(MODEL, 1, 0, "bfloat16", c.chunkSize(),
                    LmcacheChunkKeys.Algorithm.parse(c.variant()), c.noneHash());
            int[] tokens = tokens(c.tokens());
            long[] hashes = keys.hashes(tokens);
            List<String> got = keys.keys(tokens);
            assertThat(got).as("%s", c).hasSize(e.getValue().size());
            for (String[] f : e.getValue()) {
                int i = Integer.parseInt(f[4]);
                String hash = c.variant().equals("builtin") ? Long.toString(hashes[i])
                        : Long.toUnsignedString(hashes[i]);
                assertThat(hash).as("%s chunk %d", c, i).isEqualTo(f[5]);
                assertThat(got.get(i)).as("%s chunk %d", c, i).isEqualTo(f[6]);
                checked++;
            }
        }
        assertThat(checked).isEqualTo(154);
    }

    @Test
    void theSeedZeroNoneHashesAreThoseLmcacheLogs() {
        assertThat(LmcacheChunkKeys.Algorithm.BUILTIN.seedZeroNoneHash()).isEqualTo(5313149338359954478L);
        assertThat(LmcacheChunkKeys.EMPTY_TUPLE_HASH).isEqualTo(5740354900026072187L);
        assertThat(LmcacheChunkKeys.intHash(-1)).isEqualTo(-2);
        assertThat(LmcacheChunkKeys.intHash(Long.MIN_VALUE)).isEqualTo(-4);
        assertThat(LmcacheChunkKeys.intHash((1L << 61) - 1)).isZero();
    }

    @Test
    void onlyFullChunksGetKeys() {
        LmcacheChunkKeys keys = new LmcacheChunkKeys(MODEL, 1, 0, "bfloat16", 256,
                LmcacheChunkKeys.Algorithm.BUILTIN, LmcacheChunkKeys.Algorithm.BUILTIN.seedZeroNoneHash());
        assertThat(keys.keys(new int[255])).isEmpty();
        assertThat(keys.keys(new int[0])).isEmpty();
        assertThat(keys.keys(new int[513])).hasSize(2);
    }

    /** The token lists of lmcache_key_vectors.py. */
    private static int[] tokens(String name) {
        return switch (name) {
            case "range1000" -> IntStream.range(0, 1000).toArray();
            case "range256" -> IntStream.range(0, 256).toArray();
            case "range255" -> IntStream.range(0, 255).toArray();
            case "lcg600" -> lcg(600);
            default -> throw new IllegalArgumentException(name);
        };
    }

    private static int[] lcg(int n) {
        int[] out = new int[n];
        out[0] = 128000;
        long x = 1;
        for (int i = 1; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            out[i] = (int) Long.remainderUnsigned(x >>> 33, 128256);
        }
        return out;
    }
}
