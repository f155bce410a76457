package io.kvtier.kvcache.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Properties of a sweep over the synthetic chat trace. The store's tiering is not a stack algorithm (a larger cache does not
 * always hold a superset of a smaller one's items), so hit rate need not rise strictly with the budget; what holds,
 * and is asserted: it never falls by more than half a percentage point as the disk or memory grows, it never
 * passes the unlimited ceiling, memory + disk hits add up, and the same seed gives the same numbers.
 */
class SweepTest {
    private static final long MiB = 1L << 20;
    /** 300 users, 16-token chunks of 64 KiB: the shape of the defaults, about 1 GiB of chunks in all. */
    private static final ChatTraceOptions SMALL = new ChatTraceOptions(300, 6, 4, 128, 1.0, 40, 60,
            Duration.ofSeconds(30), Duration.ofMinutes(10), 4096, 7);
    private static final ChunkOptions CHUNKS = new ChunkOptions(16, 4 * 1024, false);

    private static List<Budget> grid(long[] memory, long[] disk) {
        List<Budget> budgets = new ArrayList<>();
        for (long m : memory) {
            for (long d : disk) {
                budgets.add(new Budget(m, d));
            }
        }
        return budgets;
    }

    @Test
    void hitRateDoesNotFallAsTheBudgetGrowsAndStaysUnderTheCeiling() {
        Trace trace = ChatTraceGenerator.generate(SMALL);
        long[] memory = {2 * MiB, 8 * MiB, 32 * MiB};
        long[] disk = {0, 64 * MiB, 256 * MiB, 1024 * MiB};
        Sweep.Outcome outcome = Sweep.run(trace, CHUNKS, grid(memory, disk), 2);

        List<SimulationResult> r = outcome.results();
        for (int m = 0; m < memory.length; m++) {
            for (int d = 1; d < disk.length; d++) {
                assertThat(r.get(m * disk.length + d).hitRate()).as("memory %d, disk %d", memory[m], disk[d])
                        .isGreaterThanOrEqualTo(r.get(m * disk.length + d - 1).hitRate() - 0.005);
            }
        }
        for (int d = 0; d < disk.length; d++) {
            for (int m = 1; m < memory.length; m++) {
                assertThat(r.get(m * disk.length + d).hitRate())
                        .isGreaterThanOrEqualTo(r.get((m - 1) * disk.length + d).hitRate() - 0.005);
            }
        }
        for (SimulationResult s : r) {
            assertThat(s.hitRate()).isLessThanOrEqualTo(outcome.unlimited().hitRate());
            assertThat(s.memoryHitRate() + s.diskHitRate()).isCloseTo(s.hitRate(), within(1e-12));
            assertThat(s.requests()).isEqualTo(trace.size());
        }
        System.out.printf("chunks stored with unlimited memory: %d MiB; ceiling %.3f, first %.3f, last %.3f%n",
                outcome.unlimited().writtenBytes() >> 20, outcome.unlimited().hitRate(), r.getFirst().hitRate(),
                r.getLast().hitRate());
        assertThat(r.getFirst().hitRate()).as("2 MiB of memory holds few of the users").isLessThan(0.2);
        assertThat(r.getLast().hitRate()).as("1 GiB of disk holds nearly all")
                .isGreaterThan(outcome.unlimited().hitRate() - 0.02);
        assertThat(r.getLast().diskHitRate()).isPositive();
    }

    @Test
    void aDiskWriteLimitNeedsATraceWithTimes() {
        Trace untimed = Trace.builder().add("a", 0, null, 2048, 100, null, 0).build();
        assertThatThrownBy(() -> Sweep.run(untimed, new ChunkOptions(256, 1024, false),
                List.of(new Budget(64L << 20, 1L << 30, 1L << 20)), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--disk-write-limit is a rate and needs a trace with times");
    }

    @Test
    void theSameSeedGivesTheSameResults() {
        List<Budget> budgets = List.of(new Budget(16 * MiB, 64 * MiB));
        SimulationResult a = Sweep.run(ChatTraceGenerator.generate(SMALL), CHUNKS, budgets, 1).results().getFirst();
        SimulationResult b = Sweep.run(ChatTraceGenerator.generate(SMALL), CHUNKS, budgets, 1).results().getFirst();

        assertThat(a).isEqualTo(b);
    }

    @Test
    void theGeneratorInterleavesSessionsInTimeAndGrowsEachPrompt() {
        Trace trace = ChatTraceGenerator.generate(SMALL);

        assertThat(trace.sessions()).isEqualTo(300);
        assertThat(trace.size()).isBetween(300 * 4, 300 * 8);
        int switches = 0;
        for (int i = 1; i < trace.size(); i++) {
            switches += trace.session(i) != trace.session(i - 1) ? 1 : 0;
        }
        assertThat(switches).as("consecutive requests mostly come from different users")
                .isGreaterThan(trace.size() * 9 / 10);
        assertThat(trace.prefixTokens(0)).isEqualTo(128);
    }

    @Test
    void zipfMakesTheFirstSystemPromptTheMostPopular() {
        double[] cumulative = ChatTraceGenerator.zipfCumulative(4, 1.0);

        assertThat(cumulative[0]).isCloseTo(1 / (1 + 0.5 + 1.0 / 3 + 0.25), within(1e-12));
        assertThat(ChatTraceGenerator.draw(cumulative, 0.0)).isZero();
        assertThat(ChatTraceGenerator.draw(cumulative, 0.999999)).isEqualTo(3);
        assertThat(ChatTraceGenerator.zipfCumulative(4, 0)[1]).isCloseTo(0.5, within(1e-12));
    }
}
