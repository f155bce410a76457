package io.kvtier.cli.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kvcache.simulate.Trace;
import java.io.IOException;
import java.io.StringReader;
import org.junit.jupiter.api.Test;

class TraceFileTest {
    private static Trace read(String text) throws IOException {
        return TraceFile.read(new StringReader(text), "t.jsonl");
    }

    @Test
    void readsSessionsTurnsTimesAndPrefixes() throws IOException {
        Trace t = read("""
                {"session": "u1", "turn": 0, "prompt_tokens": 1024, "new_tokens": 256, "time": 2.5, "prefix": "sys", "prefix_tokens": 512}

                {"session": 7, "turn": 0, "prompt_tokens": 600, "new_tokens": 10, "time": 1, "prefix": "sys", "prefix_tokens": 512, "model": "x"}
                {"session": "u1", "turn": 1, "prompt_tokens": 1400, "new_tokens": 256, "time": 30}
                """.replace("\"time\": 30}", "\"time\": 30, \"prefix\": \"sys\", \"prefix_tokens\": 512}"));

        assertThat(t.size()).isEqualTo(3);
        assertThat(t.sessions()).isEqualTo(2);
        assertThat(t.promptTokens(0)).as("served in time order").isEqualTo(600);
        assertThat(t.prefix(0)).isEqualTo(t.prefix(1)).isZero();
        assertThat(t.totalPromptTokens()).isEqualTo(3024);
    }

    @Test
    void namesTheLineOfAMissingField() {
        assertThatThrownBy(() -> read("""
                {"session": "a", "turn": 0, "prompt_tokens": 10, "new_tokens": 1}
                {"session": "a", "turn": 1, "new_tokens": 1}
                """)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("t.jsonl line 2: \"prompt_tokens\" is missing");
    }

    @Test
    void namesTheLineOfBadJson() {
        assertThatThrownBy(() -> read("{\"session\": \"a\", \"turn\": 0,\n"))
                .hasMessageStartingWith("t.jsonl line 1: bad JSON");
        assertThatThrownBy(() -> read("[1, 2]\n")).hasMessageStartingWith("t.jsonl line 1: expected a JSON object");
    }

    @Test
    void namesTheLineOfAWrongType() {
        assertThatThrownBy(() -> read("{\"session\": \"a\", \"turn\": 0.5, \"prompt_tokens\": 10, \"new_tokens\": 1}"))
                .hasMessage("t.jsonl line 1: \"turn\" must be a whole number, not 0.5");
        assertThatThrownBy(() -> read("{\"session\": \"a\", \"turn\": 0, \"prompt_tokens\": \"10\", \"new_tokens\": 1}"))
                .hasMessageContaining("\"prompt_tokens\" must be a number");
        assertThatThrownBy(() -> read("{\"session\": true, \"turn\": 0, \"prompt_tokens\": 10, \"new_tokens\": 1}"))
                .hasMessageContaining("\"session\" must be a string or a number");
    }

    @Test
    void namesTheLineOfATurnThatDoesNotExtendThePreviousOne() {
        assertThatThrownBy(() -> read("""
                {"session": "a", "turn": 0, "prompt_tokens": 100, "new_tokens": 50}
                {"session": "b", "turn": 0, "prompt_tokens": 100, "new_tokens": 50}
                {"session": "a", "turn": 1, "prompt_tokens": 120, "new_tokens": 50}
                """)).hasMessageStartingWith("t.jsonl line 3: session \"a\" turn 1 has prompt_tokens 120, less than");
    }

    @Test
    void anEmptyFileIsAnError() {
        assertThatThrownBy(() -> read("\n\n")).hasMessage("t.jsonl: the trace has no requests");
    }
}
