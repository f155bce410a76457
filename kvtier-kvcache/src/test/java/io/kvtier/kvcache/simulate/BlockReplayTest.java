package io.kvtier.kvcache.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** LMCache's prefix lookup over a trace that names its blocks (4-token blocks of 256 KiB), counted by hand. */
class BlockReplayTest {
    private static final long KiB = 1024;
    private static final long MiB = 1024 * KiB;
    private static final ChunkOptions CHUNKS = new ChunkOptions(4, 64 * KiB, false);
    private static final Budget ROOMY = new Budget(64 * MiB, 0);

    /** The shape of the CLI's mooncake-small.jsonl, with blocks of 4 tokens instead of 512. */
    static BlockTrace sixRequests() {
        return BlockTrace.builder(4)
                .add(0.0, 12, 20, new long[] {1, 2, 3})
                .add(0.010, 10, 5, new long[] {1, 2, 4})
                .add(0.020, 16, 7, new long[] {1, 5, 6, 7})
                .add(0.020, 10, 5, new long[] {1, 2, 4})
                .add(0.035, 15, 9, new long[] {1, 5, 8, 9})
                .add(0.040, 12, 1, new long[] {1, 10, 3})
                .build();
    }

    @Test
    void hitsArePrefixBlocksUntilTheFirstMissAndPartialLastBlocksNeverHit() {
        SimulationResult r = Replay.run(sixRequests(), CHUNKS, ROOMY);

        // 1: looks up 1 2 3, all miss, stores them.           2: full 1 2 hit; 4 is partial: not looked up, not stored
        // 3: 1 hits, 5 misses: stores 5 6 7.                  4: as 2: 1 2 hit, 4 still absent
        // 5: full 1 5 hit, 8 misses: stores 8 (9 is partial). 6: 1 hits, 10 misses; 3 is stored but after the miss
        assertThat(r.hitChunks()).isEqualTo(0 + 2 + 1 + 2 + 2 + 1);
        assertThat(r.lookedUpChunks()).isEqualTo(3 + 2 + 4 + 2 + 3 + 3);
        assertThat(r.chunkHitRate()).isEqualTo(8.0 / 17);
        assertThat(r.promptTokens()).isEqualTo(75);
        assertThat(r.hitTokens()).isEqualTo(8 * 4);
        assertThat(r.memoryHitTokens()).isEqualTo(32);
        assertThat(r.writtenBytes()).as("blocks 1 2 3 5 6 7 8 10, each once").isEqualTo(8 * 256 * KiB);
    }

    @Test
    void theCeilingIsTheRoomyBudgetsHits() {
        BlockTrace trace = sixRequests();

        assertThat(Replay.unlimited(trace, CHUNKS)).usingRecursiveComparison().ignoringFields("budget")
                .isEqualTo(Replay.run(trace, CHUNKS, ROOMY));
    }

    @Test
    void aSweepRefusesChunksOtherThanTheTracesBlocks() {
        assertThatThrownBy(() -> Sweep.run(sixRequests(), new ChunkOptions(8, 64 * KiB, false), List.of(ROOMY), 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("--chunk-tokens 8 differs");
        assertThatThrownBy(() -> Replay.run(sixRequests(), new ChunkOptions(4, 64 * KiB, true), ROOMY))
                .hasMessageStartingWith("--save-decode");
    }
}
