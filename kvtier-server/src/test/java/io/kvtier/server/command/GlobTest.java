package io.kvtier.server.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GlobTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static boolean m(String pattern, String s) {
        return Glob.matches(b(pattern), b(s));
    }

    @ParameterizedTest(name = "\"{0}\" vs \"{1}\" is {2}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "h?llo|hello|true", "h?llo|hllo|false", "h*llo|hllo|true", "h*llo|heeeello|true",
            "h[ae]llo|hallo|true", "h[ae]llo|hillo|false", "h[^e]llo|hallo|true", "h[^e]llo|hello|false",
            "h[a-b]llo|hbllo|true", "h[b-a]llo|hallo|true", "h[a-b]llo|hcllo|false",
            "*|x|true", "**|xyz|true", "a*|a|true", "a**|a|true", "a*b|a|false", "*a|a|true", "*a|ba|true",
            "*a|ab|false", "a*b*c|abc|true", "a*b*c|aXbYc|true", "a*b*c|acb|false", "*b*|ab|true",
            "\\*|*|true", "\\*|a|false", "a\\|a\\|true", "a\\|a|false", "\\\\|\\|true",
            "[|[|false", "[a|a|true", "[a|b|false", "[a|ab|false", "[^|x|true", "[]]|]|false", "[\\]]|]|true",
            "[a-]|b|false", "[a-]|_|true", "[a-]x|-x|false", "x[a\\-z]|x-|true", "x[a\\-z]|xb|false", "[?]|?|true", "[?]|a|false",
            "[*]|*|true", "[*]|ab|false", "?|\"\"|false", "\"\"|\"\"|true", "a|\"\"|false",
            "*a*a*a*a*a*a*a*a*a*a*a*a*a*b|aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa|false",
            "*a*b|aaaaab|true", "*[ab]|xb|true", "*?|x|true", "*?|\"\"|false", "??|a|false", "a*?|a|false",
            "a*?|ab|true"})
    void matchesAsRedisDoes(String pattern, String s, boolean expected) {
        assertEquals(expected, m(pattern, s));
    }

    @Test
    void theEmptyStringMatchesOnlyTheEmptyPattern() {
        assertTrue(m("", ""));
        assertFalse(m("*", ""));
        assertFalse(m("**", ""));
    }

    @Test
    void bytesCompareAsSignedCharsInRanges() {
        byte[] range = {'[', (byte) 0x80, '-', 'a', ']'}; // -128..97: every byte from 0x80 up, and 0x00..'a'
        assertTrue(Glob.matches(range, new byte[] {(byte) 0xff}));
        assertTrue(Glob.matches(range, new byte[] {0}));
        assertFalse(Glob.matches(range, new byte[] {'b'}));
        assertTrue(Glob.matches(new byte[] {(byte) 0xe9, '*'}, new byte[] {(byte) 0xe9, 1, 2}));
    }

    @Test
    void redisGivesUpAtTheThousandAndFirstStar() {
        String thousand = "a*".repeat(1000) + "b";
        String more = "a*".repeat(1001) + "b";
        String input = "a".repeat(1001) + "b";
        assertTrue(m(thousand, input));
        assertFalse(m(more, input));
        assertTrue(m("a*".repeat(1001), input), "a final star still matches");
    }

    @Test
    void pathologicalPatternsTakeLinearTime() {
        String sixtyA = "a".repeat(60);
        String longKey = "a".repeat(64 * 1024);
        assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
            for (int i = 0; i < 1000; i++) {
                assertFalse(m("a*a*a*a*a*a*a*a*a*a*a*a*a*b", sixtyA));
            }
            assertFalse(m("*a*b", longKey));
            assertFalse(m("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", longKey));
            assertTrue(m("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a", longKey));
            assertFalse(m("*" + "a".repeat(32 * 1024) + "b*", longKey));
            assertFalse(m("*" + "a".repeat(32 * 1024) + "b", longKey));
        });
    }

    @Test
    void agreesWithRedisRecursiveMatcherOnRandomInputs() {
        Random random = new Random(42);
        byte[] alphabet = b("ab*?[]^-\\");
        byte[] text = b("ab-]^\\*");
        for (int round = 0; round < 300_000; round++) {
            byte[] pattern = random(random, alphabet, random.nextInt(9));
            byte[] s = random(random, text, random.nextInt(8));
            assertEquals(RedisReference.matches(pattern, s), Glob.matches(pattern, s),
                    () -> "pattern " + Arrays.toString(pattern) + " = \"" + new String(pattern,
                            StandardCharsets.ISO_8859_1) + "\" vs \"" + new String(s, StandardCharsets.ISO_8859_1)
                            + "\"");
        }
    }

    @Test
    void agreesWithRedisOnLongLiteralRunsBetweenStars() {
        Random random = new Random(43);
        byte[] alphabet = b("aab*");
        byte[] text = b("aab");
        for (int round = 0; round < 200_000; round++) {
            byte[] pattern = random(random, alphabet, random.nextInt(16));
            byte[] s = random(random, text, random.nextInt(20));
            assertEquals(RedisReference.matches(pattern, s), Glob.matches(pattern, s),
                    () -> "\"" + new String(pattern, StandardCharsets.ISO_8859_1) + "\" vs \""
                            + new String(s, StandardCharsets.ISO_8859_1) + "\"");
        }
    }

    private static byte[] random(Random random, byte[] alphabet, int n) {
        byte[] out = new byte[n];
        for (int i = 0; i < n; i++) {
            out[i] = alphabet[random.nextInt(alphabet.length)];
        }
        return out;
    }

    /** A line-by-line port of Redis 7.0.9's recursive stringmatchlen_impl (nocase = 0), as the reference. */
    private static final class RedisReference {
        private boolean skipLongerMatches;
        private final byte[] p;
        private final byte[] s;

        private RedisReference(byte[] p, byte[] s) {
            this.p = p;
            this.s = s;
        }

        static boolean matches(byte[] p, byte[] s) {
            return new RedisReference(p, s).impl(0, 0, 0);
        }

        private int at(int i) {
            return i < p.length ? p[i] : 0; // sds strings end in a NUL that Redis reads
        }

        private boolean impl(int pi, int si, int nesting) {
            if (nesting > 1000) {
                return false;
            }
            while (pi < p.length && si < s.length) {
                switch (p[pi]) {
                    case '*' -> {
                        while (at(pi + 1) == '*') {
                            pi++;
                        }
                        if (pi == p.length - 1) {
                            return true;
                        }
                        while (si < s.length) {
                            if (impl(pi + 1, si, nesting + 1)) {
                                return true;
                            }
                            if (skipLongerMatches) {
                                return false;
                            }
                            si++;
                        }
                        skipLongerMatches = true;
                        return false;
                    }
                    case '?' -> si++;
                    case '[' -> {
                        pi++;
                        boolean not = at(pi) == '^';
                        if (not) {
                            pi++;
                        }
                        boolean match = false;
                        while (true) {
                            if (at(pi) == '\\' && p.length - pi >= 2) {
                                pi++;
                                if (p[pi] == s[si]) {
                                    match = true;
                                }
                            } else if (at(pi) == ']') {
                                break;
                            } else if (pi == p.length) {
                                pi--;
                                break;
                            } else if (p.length - pi >= 3 && p[pi + 1] == '-') {
                                int start = p[pi];
                                int end = p[pi + 2];
                                if (start > end) {
                                    int t = start;
                                    start = end;
                                    end = t;
                                }
                                pi += 2;
                                if (s[si] >= start && s[si] <= end) {
                                    match = true;
                                }
                            } else if (p[pi] == s[si]) {
                                match = true;
                            }
                            pi++;
                        }
                        if (not) {
                            match = !match;
                        }
                        if (!match) {
                            return false;
                        }
                        si++;
                    }
                    default -> {
                        if (p[pi] == '\\' && p.length - pi >= 2) {
                            pi++;
                        }
                        if (p[pi] != s[si]) {
                            return false;
                        }
                        si++;
                    }
                }
                pi++;
                if (si == s.length) {
                    while (at(pi) == '*') {
                        pi++;
                    }
                    break;
                }
            }
            return pi == p.length && si == s.length;
        }
    }
}
