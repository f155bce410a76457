package io.kvtier.server.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.server.reply.CommandException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The KVT.* request stamp: its strict parse, and lateness at the ends of the long range. */
class PeerStampTest {
    private static PeerStamp parse(String s) {
        return PeerStamp.parse(s.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void readsAnEpochWithOrWithoutADeadline() {
        assertThat(parse("7")).isEqualTo(new PeerStamp(7, PeerStamp.NO_DEADLINE));
        assertThat(parse("7").hasDeadline()).isFalse();
        assertThat(parse("7:1700000000000")).isEqualTo(new PeerStamp(7, 1_700_000_000_000L));
    }

    @Test
    void refusesAnythingButTwoIntegersAroundOneColon() {
        for (String bad : new String[] {"", ":", "7:", ":5", "7:5:3", "+7", "07", "-0", "7 ", "7:9223372036854775808"}) {
            assertThatThrownBy(() -> parse(bad)).as(bad).isInstanceOf(CommandException.class)
                    .hasMessage(CommandException.NOT_INTEGER);
        }
    }

    @Test
    void isLateByTheTimePastItsDeadlineAndGrace() {
        assertThat(parse("7:10000").lateMillis(12_500, 1_000)).isEqualTo(1_500);
        assertThat(parse("7:10000").lateMillis(10_500, 1_000)).isEqualTo(-500);
        assertThat(parse("7").lateMillis(Long.MAX_VALUE, 0)).isEqualTo(Long.MIN_VALUE);
    }

    /**
     * The deadline is the sender's number: the smallest long once made now - deadline overflow to a negative
     * "lateness", so a request stamped to have expired before time began ran as if on time.
     */
    @Test
    void aDeadlineAtTheBottomOfTheLongRangeIsLateNotEarly() {
        PeerStamp stamp = parse("7:-9223372036854775808");

        assertThat(stamp.lateMillis(1_764_000_000_000L, 1_000)).isEqualTo(Long.MAX_VALUE);
    }

    /**
     * Found by PeerStampFuzzTest (after 3.3 M inputs): saturating each subtraction is not exact when now - deadline
     * passes the long range and the grace brings the result back into it.
     */
    @Test
    void isExactWhenOnlyAnIntermediateStepLeavesTheLongRange() {
        PeerStamp stamp = parse("7:-6000000000000000000");

        assertThat(stamp.lateMillis(4_000_000_000_000_000_000L, 5_000_000_000_000_000_000L))
                .isEqualTo(5_000_000_000_000_000_000L);
    }
}
