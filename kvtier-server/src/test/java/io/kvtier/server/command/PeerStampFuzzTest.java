package io.kvtier.server.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.kvtier.server.reply.CommandException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/**
 * Arbitrary first arguments of KVT.* peer requests: {@link PeerStamp#parse} accepts exactly what a reference built on
 * {@link BigInteger} accepts (one or two canonical 64-bit decimals around the first colon) with the same values,
 * refuses everything else with Redis's "not an integer" error and nothing else, reads back what
 * {@code ClusterNode.requestEpoch} writes, and {@link PeerStamp#lateMillis} equals the exact difference clamped to
 * the long range, at any clock reading.
 *
 * <p>Plain {@code mvn verify} replays the corpus in
 * {@code src/test/resources/io/kvtier/server/command/PeerStampFuzzTestInputs/}; {@code bench/fuzz.sh} fuzzes it (see
 * docs/hardening.md, "Fuzzing"). Input layout: the stamp's bytes, then a 16-byte trailer read backwards: the clock
 * (8 bytes), the grace period (8).
 */
class PeerStampFuzzTest {
    private static final BigInteger MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

    @FuzzTest(maxDuration = "5m")
    void parsesStampsExactlyAndNeverOverflowsTheDeadline(FuzzedDataProvider data) {
        long now = data.consumeLong();
        long grace = data.consumeLong(0, Long.MAX_VALUE);
        byte[] arg = data.consumeRemainingAsBytes();

        String text = new String(arg, StandardCharsets.ISO_8859_1);
        int colon = text.indexOf(':');
        Long epoch = reference(colon < 0 ? text : text.substring(0, colon));
        Long deadline = colon < 0 ? Long.valueOf(PeerStamp.NO_DEADLINE) : reference(text.substring(colon + 1));
        if (epoch == null || deadline == null) {
            assertThatThrownBy(() -> PeerStamp.parse(arg)).isInstanceOf(CommandException.class)
                    .hasMessage(CommandException.NOT_INTEGER);
            return;
        }
        PeerStamp stamp = PeerStamp.parse(arg);
        assertThat(stamp).isEqualTo(new PeerStamp(epoch, deadline));
        assertThat(PeerStamp.parse((stamp.epoch() + ":" + stamp.deadline()).getBytes(StandardCharsets.US_ASCII)))
                .isEqualTo(stamp);

        BigInteger exact = BigInteger.valueOf(now).subtract(BigInteger.valueOf(deadline))
                .subtract(BigInteger.valueOf(grace));
        long expected = stamp.hasDeadline() ? exact.max(MIN).min(MAX).longValueExact() : Long.MIN_VALUE;
        assertThat(stamp.lateMillis(now, grace)).isEqualTo(expected);
    }

    /** Redis's string2ll, by another road: the canonical decimal form of a value in the long range, or null. */
    private static Long reference(String s) {
        if (!s.matches("-?[0-9]+")) {
            return null;
        }
        BigInteger v = new BigInteger(s);
        if (!v.toString().equals(s) || v.compareTo(MIN) < 0 || v.compareTo(MAX) > 0) {
            return null;
        }
        return v.longValueExact();
    }
}
