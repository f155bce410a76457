package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReuseCeilingTest {
    private static RequestResult sent(long at, int[] prompt, boolean ok) {
        return new RequestResult(new FleetRequest("u", 0, prompt, 1), at, at + 1, at + 2, prompt.length, 1, 0,
                ok ? null : "HTTP 503");
    }

    private static int[] tokens(int from, int count) {
        int[] out = new int[count];
        for (int i = 0; i < count; i++) {
            out[i] = from + i;
        }
        return out;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void aMultiRoundChatReusesEachEarlierRoundInWholeBlocks() {
        MultiRoundQa qa = new MultiRoundQa(new MultiRoundQa.Options(2, 3, 100, 200, 10, 20, 1, 7, 0));
        List<RequestResult> sent = new ArrayList<>();
        long t = 0;
        for (int round = 0; round < 3; round++) {
            for (long user = 0; user < 2; user++) {
                sent.add(sent(t++, qa.prompt(user, round), true));
            }
        }
        ReuseCeiling c = ReuseCeiling.of(sent, 0, 16);

        // round 0: user 0 nothing, user 1 the system prompt's 6 whole blocks (96 of 100 tokens); rounds 1 and 2: the
        // previous prompt's whole blocks (310 -> 304, 340 -> 336 tokens), not the answer's
        assertThat(c.promptTokens()).isEqualTo(2 * (310 + 340 + 370));
        assertThat(c.reusableTokens()).isEqualTo(96 + 2 * (304 + 336));
    }

    @Test
    void theWarmUpAddsBlocksButOnlyMeasuredCompletedRequestsCount() {
        int[] a = tokens(1000, 64);
        List<RequestResult> sent = List.of(sent(30, concat(a, tokens(5000, 16)), true), sent(10, a, true),
                sent(20, concat(a, tokens(7000, 32)), false));
        ReuseCeiling c = ReuseCeiling.of(sent, 20, 16);

        // the warm-up's prompt (sent at 10) holds a; the failed one (20) is not counted but adds its blocks
        assertThat(c.promptTokens()).isEqualTo(80);
        assertThat(c.reusableTokens()).isEqualTo(64);
        assertThat(c.share()).isEqualTo(0.8);
        assertThat(c.reached(32)).isEqualTo(0.5);
    }

    @Test
    void aPromptCachedWholeStillComputesItsLastToken() {
        int[] a = tokens(1000, 64);
        ReuseCeiling c = ReuseCeiling.of(List.of(sent(0, a, true), sent(1, a, true)), 0, 16);

        assertThat(c.reusableTokens()).isEqualTo(48); // 3 of 4 blocks: the 64th token is recomputed
        assertThat(ReuseCeiling.NONE.share()).isNaN();
        assertThat(ReuseCeiling.NONE.reached(10)).isNaN();
    }

    @Test
    void aDifferentTokenBreaksTheChainFromItsBlockOn() {
        int[] a = tokens(1000, 64);
        int[] b = a.clone();
        b[20] = 1; // in the second block
        ReuseCeiling c = ReuseCeiling.of(List.of(sent(0, a, true), sent(1, concat(b, tokens(9000, 16)), true)), 1,
                16);

        assertThat(c.reusableTokens()).isEqualTo(16);
        assertThatThrownBy(() -> new ReuseCeiling(10, 11)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ReuseCeiling.of(List.of(), 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
