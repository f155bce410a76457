package io.kvtier.resp;

import static io.kvtier.resp.Decoding.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The sdssplitargs port on its own: the cases the decoder cannot reach (it never completes a line holding NUL). */
class InlineSplitterTest {
    @Test
    void readsTheLineAsACStringThatEndsAtTheFirstNul() {
        assertThat(InlineSplitter.split(bytes("ECHO a\u0000b c")))
                .isDeepEqualTo(new byte[][] {bytes("ECHO"), bytes("a")});
    }

    @Test
    void findsNoArgumentsInAnEmptyOrBlankLine() {
        assertThat(InlineSplitter.split(new byte[0])).isEmpty();
        assertThat(InlineSplitter.split(bytes(" \t\u000b\f\r"))).isEmpty();
    }
}
