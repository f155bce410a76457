package io.kvtier.server.command;

import io.kvtier.server.reply.CommandException;
import java.math.BigInteger;

/**
 * The first argument of every KVT.* peer request, {@code epoch} or {@code epoch:deadline}, as
 * {@link io.kvtier.cluster.node.ClusterNode#requestEpoch} writes it. It arrives from the network like any client
 * argument, so it is parsed strictly: each part a signed 64-bit decimal as Redis's string2ll reads it, anything else
 * (a second colon, an empty part, spaces, '+') refused with Redis's "not an integer" error before the request does
 * anything. The deadline is there because TCP can deliver a request long after its sender gave up, when a partition
 * heals, and a write run then could overwrite newer ones; {@link #lateMillis} says by how much a request missed it.
 *
 * @param epoch    the sender's slot-table epoch
 * @param deadline when the sender gives up on the request (epoch millis), {@link #NO_DEADLINE} when it sent none
 */
record PeerStamp(long epoch, long deadline) {
    /** The deadline of a stamp without one: a request that may run however late it arrives. */
    static final long NO_DEADLINE = Long.MAX_VALUE;

    /**
     * Parses a stamp.
     *
     * @throws CommandException with {@link CommandException#NOT_INTEGER} if either part is not a 64-bit integer
     */
    static PeerStamp parse(byte[] b) {
        int colon = indexOf(b, (byte) ':');
        if (colon < 0) {
            return new PeerStamp(Args.parseLong(b), NO_DEADLINE);
        }
        return new PeerStamp(Args.parseLong(java.util.Arrays.copyOf(b, colon)),
                Args.parseLong(java.util.Arrays.copyOfRange(b, colon + 1, b.length)));
    }

    boolean hasDeadline() {
        return deadline != NO_DEADLINE;
    }

    /**
     * Milliseconds by which the request, seen at {@code nowMillis}, is past its deadline plus {@code graceMillis};
     * zero or less when it is not (always for a stamp without a deadline). Exact, clamped to the long range: the
     * deadline is the sender's number, and "5:-9223372036854775808" is as late as a request can be, not early.
     */
    long lateMillis(long nowMillis, long graceMillis) {
        if (!hasDeadline()) {
            return Long.MIN_VALUE;
        }
        try {
            return Math.subtractExact(Math.subtractExact(nowMillis, deadline), graceMillis);
        } catch (ArithmeticException overflow) {
            // Only a hostile or broken stamp gets here. Saturating each step is not enough: now - deadline can pass
            // the long range and the grace bring it back.
            return BigInteger.valueOf(nowMillis).subtract(BigInteger.valueOf(deadline))
                    .subtract(BigInteger.valueOf(graceMillis))
                    .max(BigInteger.valueOf(Long.MIN_VALUE)).min(BigInteger.valueOf(Long.MAX_VALUE)).longValueExact();
        }
    }

    private static int indexOf(byte[] b, byte x) {
        for (int i = 0; i < b.length; i++) {
            if (b[i] == x) {
                return i;
            }
        }
        return -1;
    }
}
