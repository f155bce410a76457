package io.kvtier.kvcache.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The checks that keep a trace multi-round, and the order it is served in. */
class TraceTest {
    @Test
    void servesTimedRequestsInTimeOrderKeepingTiesInInputOrder() {
        Trace t = Trace.builder()
                .add("a", 0, 5.0, 10, 1, null, 0)
                .add("b", 0, 1.0, 20, 1, null, 0)
                .add("c", 0, 5.0, 30, 1, null, 0)
                .build();

        assertThat(t.promptTokens(0)).isEqualTo(20);
        assertThat(t.promptTokens(1)).isEqualTo(10);
        assertThat(t.promptTokens(2)).isEqualTo(30);
        assertThat(t.sessions()).isEqualTo(3);
    }

    @Test
    void refusesATurnWhosePromptDoesNotExtendThePreviousOne() {
        Trace.Builder b = Trace.builder().add("a", 1, null, 100, 50, null, 0);

        assertThatThrownBy(() -> b.add("a", 2, null, 120, 10, null, 0))
                .hasMessage("session \"a\" turn 2 has prompt_tokens 120, less than the previous turn's prompt + "
                        + "answer (150); a turn's prompt extends the previous one's");
    }

    @Test
    void refusesTurnsOutOfOrder() {
        Trace.Builder b = Trace.builder().add("a", 3, null, 100, 50, null, 0);

        assertThatThrownBy(() -> b.add("a", 3, null, 200, 10, null, 0))
                .hasMessageContaining("turns of a session must increase");
    }

    @Test
    void refusesTimesOnSomeRequestsOnly() {
        Trace.Builder b = Trace.builder().add("a", 0, 1.0, 100, 50, null, 0);

        assertThatThrownBy(() -> b.add("b", 0, null, 100, 10, null, 0)).hasMessageContaining("time is missing");
    }

    @Test
    void refusesAPrefixWithTwoLengthsOrLongerThanThePrompt() {
        Trace.Builder b = Trace.builder().add("a", 0, null, 100, 50, "sys", 64);

        assertThatThrownBy(() -> b.add("b", 0, null, 100, 10, "sys", 32))
                .hasMessageContaining("prefix \"sys\" has prefix_tokens 32 here and 64 before");
        assertThatThrownBy(() -> b.add("c", 0, null, 10, 10, "sys", 64))
                .hasMessageContaining("prefix_tokens 64 exceeds prompt_tokens 10");
    }

    @Test
    void refusesNonPositivePrompts() {
        assertThatThrownBy(() -> Trace.builder().add("a", 0, null, 0, 50, null, 0))
                .hasMessageContaining("prompt_tokens 0 must be between 1");
        assertThatThrownBy(() -> Trace.builder().build()).hasMessage("the trace has no requests");
    }
}
