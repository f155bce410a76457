package io.kvtier.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The scheduler's decisions step by step, without time: chunked prefill within the token budget, decodes first,
 * prefix-cache hits, max sequences, preemption and recomputation when blocks run out.
 */
class SchedulerTest {
    private static final int BLOCK = 16;

    /** A request's tokens and end as the scheduler reports them. */
    private static final class Seen implements SimRequest.Listener {
        final List<Integer> tokens = new ArrayList<>();
        String end = "running";

        @Override
        public void prefilled(int cached) {
        }

        @Override
        public void tokens(int count) {
            tokens.add(count);
        }

        @Override
        public void finished(String error) {
            end = error == null ? "done" : error;
        }
    }

    private long ids;

    private SimRequest request(BlockPool pool, int[] prompt, int maxTokens, Seen seen) {
        return new SimRequest(++ids, prompt, maxTokens, pool.chain(prompt), seen);
    }

    private static int[] prompt(int from, int n) {
        return IntStream.range(from, from + n).toArray();
    }

    private static Scheduler.Step step(Scheduler s) {
        Scheduler.Step step = s.schedule();
        s.complete(step, Set.of());
        return step;
    }

    @Test
    void aLongPromptIsPrefilledInChunksOfTheTokenBudget() {
        BlockPool pool = new BlockPool(1000, BLOCK, 1);
        Scheduler s = new Scheduler(pool, 8, 512, null);
        Seen seen = new Seen();
        s.add(request(pool, prompt(0, 1200), 3, seen));
        assertThat(step(s).batch()).isEqualTo(new StepBatch(512, 512L * 513 / 2, 0, 0, 0));
        assertThat(step(s).batch()).isEqualTo(new StepBatch(512, 512L * 512 + 512L * 513 / 2, 512, 0, 0));
        assertThat(seen.tokens).isEmpty();
        assertThat(step(s).batch().prefillTokens()).isEqualTo(176);
        assertThat(seen.tokens).containsExactly(1); // the last prompt chunk samples the first token
        assertThat(step(s).batch()).isEqualTo(new StepBatch(0, 0, 0, 1, 1201));
        assertThat(step(s).batch().decodeSeqs()).isEqualTo(1);
        assertThat(seen.end).isEqualTo("done");
        assertThat(s.schedule().isEmpty()).isTrue();
        assertThat(s.prefillTokens).isEqualTo(1200);
        assertThat(pool.usage()).isZero();
    }

    @Test
    void decodingRequestsGoFirstAndANewPromptTakesWhatIsLeft() {
        BlockPool pool = new BlockPool(1000, BLOCK, 1);
        Scheduler s = new Scheduler(pool, 8, 256, null);
        Seen a = new Seen();
        s.add(request(pool, prompt(0, 100), 50, a));
        step(s); // a prefills 100 and samples
        Seen b = new Seen();
        s.add(request(pool, prompt(5000, 400), 5, b));
        Scheduler.Step mixed = step(s);
        assertThat(mixed.batch().decodeSeqs()).isEqualTo(1);
        assertThat(mixed.batch().prefillTokens()).isEqualTo(255);
        assertThat(mixed.work()).extracting(w -> w.request().listener).containsExactly(a, b);
    }

    @Test
    void aRepeatedPromptIsServedFromThePrefixCacheButItsLastTokenIsRecomputed() {
        BlockPool pool = new BlockPool(1000, BLOCK, 1);
        Scheduler s = new Scheduler(pool, 8, 8192, null);
        s.add(request(pool, prompt(0, 160), 1, new Seen()));
        step(s);
        assertThat(s.gpuHitTokens).isZero();
        s.add(request(pool, prompt(0, 160), 1, new Seen()));
        Scheduler.Step again = step(s);
        assertThat(again.batch().prefillTokens()).isEqualTo(16); // 9 of 10 blocks hit: the last block is recomputed
        assertThat(s.gpuHitTokens).isEqualTo(144);
        s.add(request(pool, prompt(0, 170), 1, new Seen()));
        assertThat(step(s).batch().prefillTokens()).isEqualTo(10); // all 10 blocks hit, 10 new tokens
        assertThat(s.promptTokens).isEqualTo(490);
    }

    @Test
    void noMoreThanMaxSeqsRunAtOnce() {
        BlockPool pool = new BlockPool(1000, BLOCK, 1);
        Scheduler s = new Scheduler(pool, 2, 8192, null);
        for (int i = 0; i < 3; i++) {
            s.add(request(pool, prompt(i * 1000, 32), 4, new Seen()));
        }
        assertThat(s.schedule().work()).hasSize(2);
        assertThat(s.waiting()).isEqualTo(1);
    }

    @Test
    void whenBlocksRunOutTheLastStartedRequestIsPreemptedAndRecomputedLater() {
        // 10 blocks: two 64-token prompts take 4 blocks each, and each needs a fifth block after 1 token and a
        // sixth after 17: only one of them can get there at a time.
        BlockPool pool = new BlockPool(10, BLOCK, 1);
        Scheduler s = new Scheduler(pool, 8, 8192, null);
        Seen first = new Seen();
        Seen second = new Seen();
        s.add(request(pool, prompt(0, 64), 40, first));
        s.add(request(pool, prompt(1000, 64), 40, second));
        int steps = 0;
        while (!(first.end.equals("done") && second.end.equals("done"))) {
            step(s);
            assertThat(++steps).as("steps").isLessThan(500);
        }
        assertThat(s.preemptions).isPositive();
        assertThat(first.tokens).hasSize(40);
        assertThat(second.tokens).hasSize(40);
        // the preempted request recomputed its prompt and the tokens it had generated
        assertThat(s.prefillTokens).isGreaterThan(128);
        assertThat(pool.usage()).isZero();
    }
}
