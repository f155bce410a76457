package io.kvtier.router.map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class KvCacheMapTest {
    private static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";

    private static int[] tokens(int from, int n) {
        return IntStream.range(from, from + n).toArray();
    }

    private static int[] concat(int[] a, int[] b) {
        return IntStream.concat(IntStream.of(a), IntStream.of(b)).toArray();
    }

    @Test
    void findsTheLeadingBlocksEachEngineHoldsFromTokensAlone() {
        KvCacheMap map = new KvCacheMap();
        map.addEngine("e1", MODEL);
        map.addEngine("e2", MODEL);
        int[] prompt = tokens(100, 64); // 4 blocks of 16
        // e1 stores all four blocks in two events (the second chained to the first's last block), e2 only the first.
        map.stored("e1", "GPU", new long[] {11, 12}, null, IntStream.of(prompt).limit(32).toArray(), 16, null, null);
        map.stored("e1", "GPU", new long[] {13, 14}, 12L, IntStream.of(prompt).skip(32).toArray(), 16, null, null);
        map.stored("e2", null, new long[] {901}, null, IntStream.of(prompt).limit(16).toArray(), 16, null, null);

        int[] query = concat(prompt, tokens(5000, 10)); // the same prompt and a new user message
        assertThat(map.lookup(MODEL, null, query)).containsExactly(
                new KvCacheMap.EnginePrefix("e1", 16, Map.of("GPU", 64)),
                new KvCacheMap.EnginePrefix("e2", 16, Map.of("GPU", 16)));
        // A prompt that differs in its second block matches the first block only.
        int[] other = prompt.clone();
        other[20] = -1;
        assertThat(map.lookup(MODEL, null, other)).extracting(p -> p.tokens("GPU")).containsExactly(16, 16);
        // Another model, another LoRA adapter: nothing.
        assertThat(map.lookup("other-model", null, query)).isEmpty();
        assertThat(map.lookup(MODEL, "sql-adapter", query)).isEmpty();
    }

    @Test
    void removedBlocksEndThePrefixWhereTheyWere() {
        KvCacheMap map = new KvCacheMap();
        map.addEngine("e1", MODEL);
        int[] prompt = tokens(0, 48);
        map.stored("e1", "GPU", new long[] {1, 2, 3}, null, prompt, 16, null, null);
        map.removed("e1", "GPU", new long[] {2});
        assertThat(map.lookup(MODEL, null, prompt)).extracting(p -> p.tokens("GPU")).containsExactly(16);
        map.removed("e1", "GPU", new long[] {1, 3, 77});
        assertThat(map.lookup(MODEL, null, prompt)).isEmpty();
        KvCacheMap.EngineStats s = map.stats().get(0);
        assertThat(s.stored()).isEqualTo(3);
        assertThat(s.removed()).isEqualTo(3);
        assertThat(s.unknownRemovals()).isEqualTo(1);
        assertThat(s.blocksByMedium()).containsEntry("GPU", 0);
    }

    @Test
    void keepsMediaApartAndCountsBlocksWhoseParentItNeverSaw() {
        KvCacheMap map = new KvCacheMap();
        map.addEngine("e1", MODEL);
        int[] prompt = tokens(7, 32);
        map.stored("e1", "GPU", new long[] {1}, null, IntStream.of(prompt).limit(16).toArray(), 16, null, null);
        map.stored("e1", "cpu", new long[] {1, 2}, null, prompt, 16, null, null);
        map.stored("e1", "GPU", new long[] {9}, 8L, IntStream.of(prompt).skip(16).toArray(), 16, null, null);
        List<KvCacheMap.EnginePrefix> found = map.lookup(MODEL, null, prompt);
        assertThat(found).hasSize(1);
        assertThat(found.get(0).tokensByMedium()).isEqualTo(Map.of("GPU", 16, "CPU", 32));
        assertThat(map.stats().get(0).orphans()).isEqualTo(1);
    }

    /**
     * vLLM's OffloadingConnector: BlockStored with the GPU blocks' hashes, no token ids, no parent, block_size 0 or the
     * offloaded block's size, medium CPU. The GPU prefix stays known; the CPU blocks take the GPU blocks' places.
     */
    @Test
    void cpuBlocksReportedByHashAloneTakeThePlacesOfTheGpuBlocksWithThatHash() {
        KvCacheMap map = new KvCacheMap();
        map.addEngine("e1", MODEL);
        int[] prompt = tokens(3, 64); // 4 GPU blocks of 16: hashes 1..4
        map.stored("e1", "GPU", new long[] {1, 2, 3, 4}, null, prompt, 16, null, null);
        map.stored("e1", "CPU", new long[] {1, 2, 3}, null, new int[0], 0, null, null); // block_size 0: unit of 1
        map.stored("e1", "CPU", new long[] {99}, null, new int[0], 0, null, null); // no GPU block of that hash
        map.stored("e1", "CPU", new long[0], null, new int[0], 0, null, null); // an empty store: nothing
        assertThat(map.lookup(MODEL, null, prompt)).containsExactly(
                new KvCacheMap.EnginePrefix("e1", 16, Map.of("GPU", 64, "CPU", 48)));
        KvCacheMap.EngineStats s = map.stats().get(0);
        assertThat(s.clears()).isZero();
        assertThat(s.orphans()).isEqualTo(1);
        assertThat(s.blocksByMedium()).containsEntry("GPU", 4).containsEntry("CPU", 3);
        // The GPU evicts its blocks: the CPU tier still holds the prefix; a CPU removal ends it there.
        map.removed("e1", "GPU", new long[] {1, 2, 3, 4});
        assertThat(map.lookup(MODEL, null, prompt)).extracting(p -> p.tokensByMedium()).containsExactly(
                Map.of("CPU", 48));
        map.removed("e1", "CPU", new long[] {2});
        assertThat(map.lookup(MODEL, null, prompt)).extracting(p -> p.tokensByMedium()).containsExactly(
                Map.of("CPU", 16));

        // Offloaded blocks of 32 tokens (2 GPU blocks): each named by the hash of its last GPU block.
        map.addEngine("e2", MODEL);
        map.stored("e2", "GPU", new long[] {11, 12, 13, 14}, null, prompt, 16, null, null);
        map.stored("e2", "CPU", new long[] {12, 14}, null, new int[0], 32, null, null);
        assertThat(map.lookup(MODEL, null, prompt)).filteredOn(p -> p.engine().equals("e2"))
                .extracting(p -> p.tokensByMedium()).containsExactly(Map.of("GPU", 64, "CPU", 64));
        assertThat(map.stats().get(1).blockSize()).isEqualTo(16); // the GPU's block size is left alone
        map.removed("e2", "CPU", new long[] {14});
        assertThat(map.lookup(MODEL, null, prompt)).filteredOn(p -> p.engine().equals("e2"))
                .extracting(p -> p.tokens("CPU")).containsExactly(32);
    }

    @Test
    void aClearOrAnotherBlockSizeForgetsTheEngine() {
        KvCacheMap map = new KvCacheMap();
        map.addEngine("e1", MODEL);
        int[] prompt = tokens(0, 64);
        map.stored("e1", "GPU", new long[] {1, 2}, null, IntStream.of(prompt).limit(32).toArray(), 16, null, null);
        map.cleared("e1");
        assertThat(map.lookup(MODEL, null, prompt)).isEmpty();
        map.stored("e1", "GPU", new long[] {1, 2}, null, IntStream.of(prompt).limit(32).toArray(), 16, null, null);
        map.stored("e1", "GPU", new long[] {5}, null, IntStream.of(prompt).limit(32).toArray(), 32, null, null);
        assertThat(map.lookup(MODEL, null, prompt)).containsExactly(
                new KvCacheMap.EnginePrefix("e1", 32, Map.of("GPU", 32)));
        assertThat(map.removeEngine("e1")).isTrue();
        assertThat(map.lookup(MODEL, null, prompt)).isEmpty();
    }

    @Test
    void refusesEventsThatDoNotAddUp() {
        KvCacheMap map = new KvCacheMap();
        map.addEngine("e1", MODEL);
        assertThatThrownBy(() -> map.stored("e1", "GPU", new long[] {1, 2}, null, tokens(0, 20), 16, null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 blocks of 16 tokens");
        map.stored("nobody", "GPU", new long[] {1}, null, tokens(0, 16), 16, null, null); // dropped: not tracked
        assertThat(map.stats()).extracting(KvCacheMap.EngineStats::engine).containsExactly("e1");
    }

    @Test
    void prefixHashesDependOnEveryTokenBeforeThem() {
        int[] a = tokens(0, 64);
        int[] b = a.clone();
        b[40] = 999;
        long[] ha = PrefixHash.chain(PrefixHash.ROOT, a, 16);
        long[] hb = PrefixHash.chain(PrefixHash.ROOT, b, 16);
        assertThat(ha).hasSize(4);
        assertThat(hb[0]).isEqualTo(ha[0]);
        assertThat(hb[1]).isEqualTo(ha[1]);
        assertThat(hb[2]).isNotEqualTo(ha[2]);
        assertThat(hb[3]).isNotEqualTo(ha[3]);
        assertThat(PrefixHash.chain(PrefixHash.root("x"), a, 16)[0]).isNotEqualTo(ha[0]);
        assertThat(PrefixHash.chain(PrefixHash.ROOT, tokens(0, 63), 16)).hasSize(3);
    }

    @Test
    void aSavedMapReadsBackWholeAndACorruptFileIsRefused(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        KvCacheMap map = new KvCacheMap();
        map.addEngine("e1", MODEL);
        int[] prompt = tokens(100, 64);
        map.stored("e1", "GPU", new long[] {11, 12, 13, 14}, null, prompt, 16, null, null);
        map.stored("e1", "CPU", new long[] {12}, null, new int[0], 32, null, null); // by hash, 2 GPU blocks a unit
        MapSnapshot saved = map.save("e1", 41, 0xABCDL, new long[] {0});
        java.nio.file.Path file = dir.resolve("map.state");
        MapSnapshot.write(file, List.of(saved));
        MapSnapshot read = MapSnapshot.read(file).get("e1");
        assertThat(read.seq()).isEqualTo(41);
        assertThat(read.digest()).isEqualTo(0xABCDL);
        assertThat(read.blocks()).isEqualTo(5);

        KvCacheMap restarted = new KvCacheMap();
        restarted.addEngine("e1", MODEL);
        assertThat(restarted.restore(read)).isTrue();
        assertThat(restarted.lookup(MODEL, null, prompt)).isEqualTo(map.lookup(MODEL, null, prompt));
        assertThat(restarted.stats().get(0).clears()).isZero();
        KvCacheMap otherModel = new KvCacheMap();
        otherModel.addEngine("e1", "another-model");
        assertThat(otherModel.restore(read)).as("an engine serving another model now").isFalse();

        byte[] bytes = java.nio.file.Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 1;
        java.nio.file.Files.write(file, bytes);
        assertThatThrownBy(() -> MapSnapshot.read(file)).hasMessageContaining("checksum");
        java.nio.file.Files.write(file, java.util.Arrays.copyOf(bytes, 20));
        assertThatThrownBy(() -> MapSnapshot.read(file)).isInstanceOf(java.io.IOException.class);
        assertThat(MapSnapshot.read(dir.resolve("none"))).isEmpty();
    }
}
