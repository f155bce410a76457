package io.kvtier.resp;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Arbitrary lines through the sdssplitargs port: only the unbalanced-quotes {@link RespException} may escape; the
 * arguments never hold more bytes than the line; a line without quotes or backslashes splits as plain words do; and
 * the arguments, each written back double-quoted with every byte as {@code \xHH}, split into themselves again.
 *
 * <p>Plain {@code mvn verify} replays the corpus in
 * {@code src/test/resources/io/kvtier/resp/InlineSplitterFuzzTestInputs/}; {@code bench/fuzz.sh} fuzzes it (see
 * docs/hardening.md, "Fuzzing"). The input is the line itself, without its newline.
 */
class InlineSplitterFuzzTest {
    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    @FuzzTest(maxDuration = "5m")
    void splitsLikeSdssplitargsAndRoundTrips(byte[] line) {
        byte[][] args;
        try {
            args = InlineSplitter.split(line);
        } catch (RespException e) {
            assertThat(e.getMessage()).isEqualTo(InlineSplitter.UNBALANCED_QUOTES);
            return;
        }
        assertThat(Arrays.stream(args).mapToLong(a -> a.length).sum()).isLessThanOrEqualTo(line.length);
        if (!hasQuoteOrBackslash(line)) {
            assertThat(args).isDeepEqualTo(splitOnBlanks(line));
        }
        assertThat(InlineSplitter.split(quoted(args))).isDeepEqualTo(args);
    }

    private static boolean hasQuoteOrBackslash(byte[] line) {
        for (byte b : line) {
            if (b == 0) {
                return false;
            }
            if (b == '"' || b == '\'' || b == '\\') {
                return true;
            }
        }
        return false;
    }

    /**
     * The obvious split, for lines where quoting plays no part, up to the first NUL: arguments are separated by C
     * blanks, but an argument ends only at a space, tab, CR or LF, so a vertical tab or form feed inside one is kept
     * (as in Redis 7.0: {@code "ECHO \x0b\x0cc\x0c"} echoes {@code "c\x0c"}).
     */
    private static byte[][] splitOnBlanks(byte[] line) {
        List<byte[]> args = new ArrayList<>();
        ByteArrayOutputStream current = null;
        for (byte b : line) {
            if (b == 0) {
                break;
            }
            boolean ends = b == ' ' || b == '\t' || b == '\r' || b == '\n';
            if (current == null ? ends || b == 0x0b || b == '\f' : ends) {
                if (current != null) {
                    args.add(current.toByteArray());
                    current = null;
                }
            } else {
                if (current == null) {
                    current = new ByteArrayOutputStream();
                }
                current.write(b);
            }
        }
        if (current != null) {
            args.add(current.toByteArray());
        }
        return args.toArray(new byte[0][]);
    }

    /** Every argument as {@code "\xHH\xHH..."}, separated by single spaces. */
    private static byte[] quoted(byte[][] args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] arg : args) {
            if (out.size() > 0) {
                out.write(' ');
            }
            out.write('"');
            for (byte b : arg) {
                out.write('\\');
                out.write('x');
                out.write(HEX[(b >> 4) & 0xf]);
                out.write(HEX[b & 0xf]);
            }
            out.write('"');
        }
        return out.toByteArray();
    }
}
