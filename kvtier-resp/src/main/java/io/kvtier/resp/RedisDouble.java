package io.kvtier.resp;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Formats a double the way Redis 7.0's {@code addReplyDouble} does: C's {@code "%.17g"} (17 significant digits,
 * trailing zeros dropped, exponent form below 1e-4 and from 1e17 on), with {@code inf}/{@code -inf} for infinities.
 * Exact because it rounds the double's exact decimal expansion half-to-even, as glibc does. Stateless.
 */
final class RedisDouble {
    private static final int SIGNIFICANT_DIGITS = 17;
    private static final MathContext G17 = new MathContext(SIGNIFICANT_DIGITS, RoundingMode.HALF_EVEN);

    private RedisDouble() {
    }

    static String format(double d) {
        if (Double.isNaN(d)) {
            return Double.doubleToRawLongBits(d) < 0 ? "-nan" : "nan";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        if (d == 0) {
            return Double.doubleToRawLongBits(d) < 0 ? "-0" : "0";
        }
        BigDecimal rounded = new BigDecimal(d).round(G17);
        int exponent = rounded.precision() - rounded.scale() - 1;
        BigDecimal stripped = rounded.stripTrailingZeros();
        if (exponent >= -4 && exponent < SIGNIFICANT_DIGITS) {
            return stripped.toPlainString();
        }
        return scientific(d < 0, stripped.unscaledValue().abs().toString(), exponent);
    }

    /** {@code %e} style: one digit, the rest after a point, then an exponent of at least two digits. */
    private static String scientific(boolean negative, String digits, int exponent) {
        StringBuilder text = new StringBuilder(24);
        if (negative) {
            text.append('-');
        }
        text.append(digits.charAt(0));
        if (digits.length() > 1) {
            text.append('.').append(digits, 1, digits.length());
        }
        text.append('e').append(exponent < 0 ? '-' : '+');
        int magnitude = Math.abs(exponent);
        if (magnitude < 10) {
            text.append('0');
        }
        return text.append(magnitude).toString();
    }
}
