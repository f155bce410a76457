package io.kvtier.kvcache.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** LMCache's chunking and prefix lookup over hand-computable traces (4-token chunks of 256 KiB). */
class ReplayTest {
    private static final long KiB = 1024;
    private static final long MiB = 1024 * KiB;
    private static final ChunkOptions CHUNKS = new ChunkOptions(4, 64 * KiB, false);
    private static final Budget ROOMY = new Budget(64 * MiB, 0);

    /** Session "a": prompts of 10, 20, 30 tokens; answers of 6, 3, 1. */
    private static Trace threeTurns() {
        return Trace.builder()
                .add("a", 0, null, 10, 6, null, 0)
                .add("a", 1, null, 20, 3, null, 0)
                .add("a", 2, null, 30, 1, null, 0)
                .build();
    }

    @Test
    void oneSessionOfThreeTurnsHitsTheFullChunksOfEarlierPrompts() {
        SimulationResult r = Replay.run(threeTurns(), CHUNKS, ROOMY);

        // turn 0 stores chunks 0-1 (tokens 0-7; 8-9 are a partial chunk); turn 1 hits them (8 tokens) and stores
        // chunks 2-4; turn 2 hits chunks 0-4 (20 tokens)
        assertThat(r.promptTokens()).isEqualTo(60);
        assertThat(r.hitTokens()).isEqualTo(28);
        assertThat(r.memoryHitTokens()).isEqualTo(28);
        assertThat(r.diskHitTokens()).isZero();
        assertThat(r.hitRate()).isEqualTo(28.0 / 60);
        assertThat(r.writtenBytes()).isEqualTo(7 * 256 * KiB);
        assertThat(r.memoryReadBytes()).isEqualTo(7 * 256 * KiB);
        assertThat(r.evictedBytes()).isZero();
    }

    @Test
    void savingDecodedTokensAlsoStoresTheAnswersChunks() {
        SimulationResult r = Replay.run(threeTurns(), new ChunkOptions(4, 64 * KiB, true), ROOMY);

        // turn 0 stores 16 tokens (4 chunks), turn 1 hits 4 chunks and stores chunk 4 (23 tokens: 5 chunks),
        // turn 2 hits chunks 0-4
        assertThat(r.hitTokens()).isEqualTo(16 + 20);
    }

    @Test
    void sessionsShareOnlyTheFullChunksInsideTheirCommonPrefix() {
        Trace trace = Trace.builder()
                .add("a", 0, null, 14, 0, "sys", 10)
                .add("b", 0, null, 14, 0, "sys", 10)
                .add("c", 0, null, 14, 0, "other", 10)
                .build();

        SimulationResult r = Replay.run(trace, CHUNKS, ROOMY);

        // chunks 0-1 (tokens 0-7) lie inside "sys"; chunk 2 (tokens 8-11) holds session tokens 10-11
        assertThat(r.hitTokens()).isEqualTo(8);
    }

    /** 20 sessions ask once, then all of them come back: one 256 KiB chunk each, memory holds about 3. */
    private static Trace twentyReturningSessions() {
        Trace.Builder b = Trace.builder();
        for (int s = 0; s < 20; s++) {
            b.add("s" + s, 0, null, 4, 0, null, 0);
        }
        for (int s = 0; s < 20; s++) {
            b.add("s" + s, 1, null, 8, 0, null, 0);
        }
        return b.build();
    }

    @Test
    void aBudgetThatHoldsTooLittleHitsNothing() {
        SimulationResult r = Replay.run(twentyReturningSessions(), CHUNKS, new Budget(MiB, 0));

        assertThat(r.hitTokens()).isZero();
        assertThat(r.evictedBytes()).as("victims are lost without a disk tier").isPositive();
    }

    @Test
    void aDiskTierTurnsTheSameMissesIntoDiskHits() {
        SimulationResult memoryOnly = Replay.run(twentyReturningSessions(), CHUNKS, new Budget(MiB, 0));
        SimulationResult withDisk = Replay.run(twentyReturningSessions(), CHUNKS, new Budget(MiB, 64 * MiB));

        assertThat(memoryOnly.hitTokens()).isZero();
        // the last 3 sessions' chunks were in memory too, but each returning session's put demoted one of them
        assertThat(withDisk.hitTokens()).isEqualTo(20 * 4);
        assertThat(withDisk.diskHitTokens()).isEqualTo(20 * 4);
        assertThat(withDisk.diskReadBytes()).isEqualTo(20 * 256 * KiB);
        assertThat(withDisk.evictedBytes()).isZero();
    }

    @Test
    void theUnlimitedCeilingBoundsEveryBudget() {
        Trace trace = twentyReturningSessions();
        SimulationResult unlimited = Replay.unlimited(trace, CHUNKS);

        assertThat(unlimited.hitTokens()).isEqualTo(20 * 4);
        assertThat(Replay.run(trace, CHUNKS, new Budget(MiB, 64 * MiB)).hitTokens())
                .isLessThanOrEqualTo(unlimited.hitTokens());
    }

    @Test
    void refusesABudgetThatCannotHoldOneChunk() {
        ChunkOptions big = new ChunkOptions(256, 131_072, false); // 32 MiB
        assertThatThrownBy(() -> Replay.run(threeTurns(), big, new Budget(16 * MiB, 32 * MiB)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--disk 33554432 cannot hold a chunk of 33554432 bytes")
                .hasMessageContaining("needs at least");
        assertThatThrownBy(() -> Replay.run(threeTurns(), big, new Budget(16 * MiB, 0)))
                .hasMessageContaining("--memory 16777216 is too small for a chunk");
    }

    @Test
    void theSmallestDiskForARecordHoldsItAndOneByteLessDoesNot() {
        long record = 32 * MiB + 136;
        long min = Budget.minDiskFor(record);

        assertThat(new Budget(MiB, min).maxRecordBytes()).isGreaterThanOrEqualTo(record);
        assertThat(new Budget(MiB, min - 1).maxRecordBytes()).isLessThan(record);
    }
}
