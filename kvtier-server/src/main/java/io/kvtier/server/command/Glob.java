package io.kvtier.server.command;

/** Redis's glob matching (stringmatchlen): {@code * ? [abc] [^a] [a-z]} and backslash escapes, on raw bytes. */
final class Glob {
    private Glob() {
    }

    static boolean matches(byte[] pattern, byte[] string) {
        if (string.length == 0) {
            return pattern.length == 0; // stringmatchlen never enters its loop for an empty string
        }
        return match(pattern, 0, string, 0, 0);
    }

    private static boolean match(byte[] p, int pi, byte[] s, int si, int depth) {
        if (depth > 1000) {
            return false; // Redis bounds recursion too (nesting of '*')
        }
        while (pi < p.length && si <= s.length) {
            switch (p[pi]) {
                case '*' -> {
                    while (pi + 1 < p.length && p[pi + 1] == '*') {
                        pi++;
                    }
                    if (pi + 1 == p.length) {
                        return true;
                    }
                    for (int k = si; k <= s.length; k++) {
                        if (match(p, pi + 1, s, k, depth + 1)) {
                            return true;
                        }
                    }
                    return false;
                }
                case '?' -> {
                    if (si == s.length) {
                        return false;
                    }
                    si++;
                }
                case '[' -> {
                    if (si == s.length) {
                        return false;
                    }
                    int[] next = new int[1];
                    if (!matchClass(p, pi + 1, s[si], next)) {
                        return false;
                    }
                    pi = next[0];
                    si++;
                }
                default -> {
                    if (p[pi] == '\\' && pi + 1 < p.length) {
                        pi++;
                    }
                    if (si == s.length || p[pi] != s[si]) {
                        return false;
                    }
                    si++;
                }
            }
            pi++;
        }
        return pi == p.length && si == s.length;
    }

    /** Matches {@code c} against the class starting after '['; leaves next[0] at the closing ']' (or the end). */
    private static boolean matchClass(byte[] p, int pi, byte c, int[] next) {
        boolean not = pi < p.length && p[pi] == '^';
        if (not) {
            pi++;
        }
        boolean matched = false;
        while (pi < p.length && p[pi] != ']') {
            if (p[pi] == '\\' && pi + 1 < p.length) {
                pi++;
                matched |= p[pi] == c;
            } else if (pi + 2 < p.length && p[pi + 1] == '-') {
                int lo = p[pi]; // signed, like Redis's char: bytes from 0x80 sort below 0x00
                int hi = p[pi + 2];
                if (lo > hi) {
                    int t = lo;
                    lo = hi;
                    hi = t;
                }
                matched |= c >= lo && c <= hi;
                pi += 2;
            } else {
                matched |= p[pi] == c;
            }
            pi++;
        }
        if (pi == p.length) {
            pi--; // unterminated class: Redis treats the end of the pattern as its end
        }
        next[0] = pi;
        return not != matched;
    }
}
