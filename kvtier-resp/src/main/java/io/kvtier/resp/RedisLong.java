package io.kvtier.resp;

import io.netty.buffer.ByteBuf;

/**
 * Parses a count or length line exactly as Redis's {@code string2ll} does: an optional '-', no leading zeros, no
 * '+', no blanks, at most 20 characters, within the range of a signed 64-bit integer. Stateless.
 */
final class RedisLong {
    /** Redis's LONG_STR_SIZE: a string of this many characters or more is never a number. */
    private static final int MAX_CHARS = 21;

    private RedisLong() {
    }

    /**
     * Returns the integer written in bytes {@code [from, to)} of {@code in}.
     *
     * @throws RespException carrying {@code error} when the bytes are not a number string2ll accepts
     */
    static long parse(ByteBuf in, int from, int to, String error) {
        int length = to - from;
        if (length <= 0 || length >= MAX_CHARS) {
            throw new RespException(error);
        }
        if (length == 1 && in.getByte(from) == '0') {
            return 0;
        }
        boolean negative = in.getByte(from) == '-';
        int i = negative ? from + 1 : from;
        if (i == to || !isDigit(in.getByte(i)) || in.getByte(i) == '0') {
            throw new RespException(error);
        }
        // Accumulate negatively, like Long.parseLong, so that Long.MIN_VALUE is reachable without overflow.
        long value = 0;
        for (; i < to; i++) {
            byte b = in.getByte(i);
            int digit = b - '0';
            if (!isDigit(b) || value < Long.MIN_VALUE / 10 || value * 10 < Long.MIN_VALUE + digit) {
                throw new RespException(error);
            }
            value = value * 10 - digit;
        }
        if (negative) {
            return value;
        }
        if (value == Long.MIN_VALUE) {
            throw new RespException(error);
        }
        return -value;
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }
}
