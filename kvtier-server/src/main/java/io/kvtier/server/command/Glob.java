package io.kvtier.server.command;

/*
 * Redis's glob (util.c stringmatchlen, 7.0.9+) without its exponential search.
 *
 * Semantics, byte for byte as Redis: '*' any run, '?' one byte, '[...]' a class ('^' negates, 'a-z' a range, reversed
 * ranges are swapped, '\' escapes inside, bytes compare as signed chars, an unterminated class ends at the end of the
 * pattern), '\x' the literal x (a trailing '\' is itself), consecutive stars are one. Quirks kept: the empty string
 * matches only the empty pattern (KEYS and SCAN treat a lone "*" apart, as Redis does); a class "[a-]" is the range
 * a..']' and the class goes on; Redis gives up (no match) on reaching the 1001st star with input left (its nesting
 * limit), unless that star ends the pattern.
 *
 * Algorithm. The pattern is compiled once into tokens (a class into a 256-bit set), then matched greedily with a
 * single backtrack point, the last star seen: on a mismatch the text after that star restarts one byte later. An
 * earlier star never needs to be revisited: if the rest of the pattern after star k matches nowhere in the
 * remaining input, longer runs for stars before k only leave less input (Redis 7.0.9's skipLongerMatches makes the
 * same argument). Two shortcuts: after the last star only one-byte tokens remain, so they are tried at the end of the
 * input only; a run of one-byte tokens between two stars is searched for its first occurrence, with KMP if it is
 * plain literals, else with Shift-And (bit-parallel, 64 positions per word). Cost: O(len(pattern) + len(key)) for
 * literal runs (the attack patterns "a*a*...*b", "*a*b", "*aaa...ab*"), O(len(key) x len(run) / 64) for a run with
 * '?' or classes, and O(256 x len(pattern)) to compile those masks; no recursion, no backtracking into a run.
 */
/** A compiled Redis glob pattern; immutable and thread-safe. */
final class Glob {
    private static final int STAR = -1;
    private static final int ANY = -2;
    private static final int CLASS = -3; // CLASS - i: the i-th class set
    /** Redis (stringmatchlen_impl) stops recursing below this many nested stars. */
    static final int MAX_STARS = 1000;

    private final int[] tokens;   // >= 0: a literal byte (0..255); STAR; ANY; CLASS - i
    private final long[] classes; // 4 longs per class: the 256 bytes it accepts
    private final boolean empty;
    private final int maxKey;
    private final int lastStar;   // token index of the last star, -1 if none
    /** At a star followed by literals only up to the next star: KMP failure links of those literals, else null. */
    private final int[][] literalRuns;
    /** At a star followed by a run with '?' or a class: Shift-And masks, per byte value the positions accepting it. */
    private final long[][] mixedRuns;
    /** At a star before the last one: the number of one-byte tokens up to the next star. */
    private final int[] runLengths;

    private Glob(int[] tokens, long[] classes, boolean empty, int maxKey) {
        this.tokens = tokens;
        this.classes = classes;
        this.empty = empty;
        this.maxKey = maxKey;
        int last = tokens.length - 1;
        while (last >= 0 && tokens[last] != STAR) {
            last--;
        }
        this.lastStar = last;
        this.literalRuns = new int[tokens.length][];
        this.mixedRuns = new long[tokens.length][];
        this.runLengths = new int[tokens.length];
        int stars = 0;
        for (int t = 0; t < last; t++) {
            // Runs after the MAX_STARS-th star are never searched (Redis gives up there): no masks, so memory stays
            // O(256 x min(len(pattern), maxKey) / 8 + 256 x 8 x MAX_STARS) bytes, a few MiB at most.
            if (tokens[t] == STAR && ++stars <= MAX_STARS) {
                runLengths[t] = runLength(t + 1);
                literalRuns[t] = failureLinks(tokens, t + 1);
                if (literalRuns[t] == null) {
                    mixedRuns[t] = shiftAndMasks(t + 1);
                }
            }
        }
    }

    private int runLength(int from) {
        int end = from;
        while (tokens[end] != STAR) {
            end++;
        }
        return end - from;
    }

    /** Shift-And masks of the run from {@code from}: bit j of word (c * words + j / 64) if token j accepts byte c. */
    private long[] shiftAndMasks(int from) {
        int m = runLength(from);
        int words = (m + 63) >>> 6;
        long[] masks = new long[256 * words];
        for (int j = 0; j < m; j++) {
            for (int c = 0; c < 256; c++) {
                if (accepts(tokens[from + j], (byte) c)) {
                    masks[c * words + (j >>> 6)] |= 1L << j;
                }
            }
        }
        return masks;
    }

    /** Like {@link #find}, for a run with '?' or classes: Shift-And, O(len(key) x len(run) / 64). */
    private static int findMixed(byte[] s, int i, int m, long[] masks) {
        int words = (m + 63) >>> 6;
        long[] d = new long[words];
        long last = 1L << ((m - 1) & 63);
        for (; i < s.length; i++) {
            int base = (s[i] & 0xff) * words;
            long carry = 1;
            for (int w = 0; w < words; w++) {
                long out = d[w] >>> 63;
                d[w] = (d[w] << 1 | carry) & masks[base + w];
                carry = out;
            }
            if ((d[words - 1] & last) != 0) {
                return i - m + 1;
            }
        }
        return -1;
    }

    /** KMP failure links of the run of literal tokens from {@code from} to the next star; null if not all literal. */
    private static int[] failureLinks(int[] tokens, int from) {
        int end = from;
        while (tokens[end] != STAR) {
            if (tokens[end++] < 0) {
                return null;
            }
        }
        int[] fail = new int[end - from];
        for (int q = 1, k = 0; q < fail.length; q++) {
            while (k > 0 && tokens[from + k] != tokens[from + q]) {
                k = fail[k - 1];
            }
            if (tokens[from + k] == tokens[from + q]) {
                k++;
            }
            fail[q] = k;
        }
        return fail;
    }

    /** The first position at or after {@code i} where the literal run at {@code from} occurs in {@code s}, or -1. */
    private int find(byte[] s, int i, int from, int[] fail) {
        for (int k = 0; i < s.length; i++) {
            int b = s[i] & 0xff;
            while (k > 0 && tokens[from + k] != b) {
                k = fail[k - 1];
            }
            if (tokens[from + k] == b && ++k == fail.length) {
                return i - fail.length + 1;
            }
        }
        return -1;
    }

    /**
     * Compiles {@code pattern} as stringmatchlen reads it, for keys of at most {@code maxKey} bytes: O(len(pattern))
     * time, memory O(min(len(pattern), maxKey)), since a pattern with more than maxKey byte-consuming tokens can
     * match no such key.
     */
    static Glob compile(byte[] pattern, int maxKey) {
        int[] tokens = new int[Math.min(pattern.length, 64)];
        long[] classes = new long[0];
        int n = 0;
        int sets = 0;
        int consuming = 0;
        for (int p = 0; p < pattern.length; ) {
            if (n == tokens.length) {
                tokens = java.util.Arrays.copyOf(tokens, n * 2);
            }
            byte c = pattern[p];
            if (c == '*') {
                while (p + 1 < pattern.length && pattern[p + 1] == '*') {
                    p++;
                }
                tokens[n++] = STAR;
                p++;
                continue;
            }
            if (++consuming > maxKey) {
                return new Glob(new int[0], classes, false, maxKey); // needs more bytes than any key has: none
            }
            if (c == '?') {
                tokens[n++] = ANY;
                p++;
            } else if (c == '[') {
                if ((sets + 1) * 4 > classes.length) {
                    classes = java.util.Arrays.copyOf(classes, Math.max(16, classes.length * 2));
                }
                p = compileClass(pattern, p + 1, classes, sets * 4);
                tokens[n++] = CLASS - sets++;
            } else {
                if (c == '\\' && p + 1 < pattern.length) {
                    p++;
                }
                tokens[n++] = pattern[p++] & 0xff;
            }
        }
        return new Glob(java.util.Arrays.copyOf(tokens, n), classes, pattern.length == 0, maxKey);
    }

    /** Compiles {@code pattern} for keys of any length. */
    static Glob compile(byte[] pattern) {
        return compile(pattern, Integer.MAX_VALUE);
    }

    /**
     * Reads the class that starts after its '[' at {@code p} into the set at {@code base}, exactly as Redis's loop
     * does; returns where the next token starts (after the ']', or the end of an unterminated class).
     */
    private static int compileClass(byte[] pat, int p, long[] classes, int base) {
        boolean not = p < pat.length && pat[p] == '^';
        if (not) {
            p++;
        }
        while (true) {
            if (p + 1 < pat.length && pat[p] == '\\') {
                add(classes, base, pat[++p], pat[p]);
            } else if (p < pat.length && pat[p] == ']') {
                break;
            } else if (p >= pat.length) {
                break; // unterminated: the pattern's end closes it
            } else if (p + 2 < pat.length && pat[p + 1] == '-') {
                add(classes, base, pat[p], pat[p + 2]); // signed chars, a reversed range swapped
                p += 2;
            } else {
                add(classes, base, pat[p], pat[p]);
            }
            p++;
        }
        if (not) {
            for (int i = 0; i < 4; i++) {
                classes[base + i] = ~classes[base + i];
            }
        }
        return p + 1;
    }

    private static void add(long[] classes, int base, byte from, byte to) {
        int lo = Math.min(from, to);
        int hi = Math.max(from, to);
        for (int v = lo; v <= hi; v++) {
            int u = v & 0xff;
            classes[base + (u >>> 6)] |= 1L << u;
        }
    }

    static boolean matches(byte[] pattern, byte[] string) {
        return compile(pattern).matches(string);
    }

    /** Whether {@code s} (at most the compiled-for key length) matches, as Redis's stringmatchlen(p, s, 0). */
    boolean matches(byte[] s) {
        if (s.length > maxKey) {
            throw new IllegalArgumentException("key of " + s.length + " bytes, compiled for at most " + maxKey);
        }
        if (s.length == 0) {
            return empty; // stringmatchlen never enters its loop for an empty string
        }
        int t = 0;
        int i = 0;
        int starT = -1;   // token index of the last star passed, -1 if none
        int starI = 0;    // input position the text after that star is being tried at
        int stars = 0;
        while (true) {
            if (i == s.length) {
                while (t < tokens.length && tokens[t] == STAR) {
                    t++;
                }
                if (t == tokens.length) {
                    return true;
                }
            } else if (t < tokens.length && tokens[t] == STAR) {
                if (t == tokens.length - 1) {
                    return true;
                }
                if (++stars > MAX_STARS) {
                    return false;
                }
                starT = t++;
                starI = i;
                if (starT == lastStar) {
                    // Only one-byte tokens follow: the one place they can match is the end of the input.
                    int at = s.length - (tokens.length - t);
                    if (at < i) {
                        return false;
                    }
                    starI = at;
                    i = at;
                } else {
                    // One-byte tokens up to the next star: their first occurrence is the greedy choice. Should the
                    // rest fail, a later occurrence fails too: the next star is the one to retry.
                    int m = runLengths[starT];
                    int at = literalRuns[starT] != null ? find(s, i, t, literalRuns[starT])
                            : findMixed(s, i, m, mixedRuns[starT]);
                    if (at < 0) {
                        return false;
                    }
                    i = at + m;
                    t += m;
                    starI = s.length - 1; // no retry from this star
                }
                continue;
            } else if (t < tokens.length && accepts(tokens[t], s[i])) {
                t++;
                i++;
                continue;
            }
            if (starT < 0 || starT == lastStar || ++starI == s.length) {
                return false; // no star to retry, or the text after it failed at every non-empty suffix
            }
            t = starT + 1;
            i = starI;
        }
    }

    private boolean accepts(int token, byte b) {
        if (token >= 0) {
            return token == (b & 0xff);
        }
        if (token == ANY) {
            return true;
        }
        int base = (CLASS - token) * 4;
        int u = b & 0xff;
        return (classes[base + (u >>> 6)] & (1L << u)) != 0;
    }
}
