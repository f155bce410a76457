package io.kvtier.router.tokens;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Rewrites the pieces of Jinja2 syntax Jinjava parses otherwise. A keyword argument's value is a whole expression
 * in Jinja2 ({@code namespace(last=messages|length - 1)} passes {@code length - 1}), while Jinjava binds the keyword to
 * the first operand and applies the rest to the keyword. Each keyword argument's value is put in parentheses
 * ({@code last=(messages|length - 1)}), which means the same in both. And {@code x[::-1]} (a reversed copy; Jinjava
 * slices take no step) becomes {@code x|reverse}. And {@code not x is defined} means {@code not (x is defined)} in Jinja2
 * (a test binds tighter than {@code not}), while Jinjava reads {@code (not x) is defined}, which is always true: Llama
 * 3's templates ask {@code not date_string is defined}; it becomes {@code x is not defined} ({@code not x is not t},
 * {@code x is t}). Only inside {@code {{ }}} and {@code {% %}} tags, outside string literals; comments and text are
 * copied as they are.
 */
final class Jinja2Syntax {
    private Jinja2Syntax() {
    }

    static String rewrite(String source) {
        StringBuilder out = new StringBuilder(source.length() + 64);
        int i = 0;
        int n = source.length();
        while (i < n) {
            int open = source.indexOf('{', i);
            if (open < 0 || open + 1 >= n) {
                out.append(source, i, n);
                break;
            }
            char kind = source.charAt(open + 1);
            if (kind == '#') {
                int close = source.indexOf("#}", open + 2);
                int end = close < 0 ? n : close + 2;
                out.append(source, i, end);
                i = end;
            } else if (kind == '{' || kind == '%') {
                out.append(source, i, open + 2);
                i = tag(source, open + 2, kind == '{' ? '}' : '%', out);
            } else {
                out.append(source, i, open + 1);
                i = open + 1;
            }
        }
        return out.toString();
    }

    /** Copies a tag's inside from {@code i} up to and including its closing {@code }}} or {@code %}}. */
    private static int tag(String s, int i, char closer, StringBuilder out) {
        int n = s.length();
        Deque<boolean[]> brackets = new ArrayDeque<>(); // per open bracket: {is a paren, a keyword value is open}
        char previous = '(';
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\'' || c == '"') {
                int end = i + 1;
                while (end < n && s.charAt(end) != c) {
                    end += s.charAt(end) == '\\' ? 2 : 1;
                }
                end = Math.min(end + 1, n);
                out.append(s, i, end);
                i = end;
                previous = c;
                continue;
            }
            if (brackets.isEmpty() && c == closer && i + 1 < n && s.charAt(i + 1) == '}') {
                out.append(c).append('}');
                return i + 2;
            }
            if (c == 'n' && s.startsWith("not", i) && (i == 0 || !Character.isJavaIdentifierPart(s.charAt(i - 1)))) {
                int end = negatedTest(s, i, out);
                if (end > i) {
                    i = end;
                    previous = 'e';
                    continue;
                }
            }
            if (c == '[' && s.startsWith("::-1]", i + 1)) {
                out.append("|reverse"); // x[::-1], Python's reversed copy; Jinjava has no slice steps
                i += 6;
                previous = 'e';
                continue;
            }
            if (c == '(' || c == '[' || c == '{') {
                brackets.push(new boolean[] {c == '(', false});
            } else if (c == ')' || c == ']' || c == '}') {
                if (!brackets.isEmpty()) {
                    if (brackets.peek()[1]) {
                        out.append(')');
                    }
                    brackets.pop();
                }
            } else if (c == ',' && !brackets.isEmpty() && brackets.peek()[1]) {
                out.append(')');
                brackets.peek()[1] = false;
            } else if (Character.isJavaIdentifierStart(c) && !brackets.isEmpty() && brackets.peek()[0]
                    && (previous == '(' || previous == ',')) {
                int end = i;
                while (end < n && Character.isJavaIdentifierPart(s.charAt(end))) {
                    end++;
                }
                int eq = end;
                while (eq < n && s.charAt(eq) == ' ') {
                    eq++;
                }
                if (eq + 1 < n && s.charAt(eq) == '=' && s.charAt(eq + 1) != '=') {
                    out.append(s, i, eq + 1).append('(');
                    brackets.peek()[1] = true;
                    i = eq + 1;
                    previous = '=';
                    continue;
                }
                out.append(s, i, end);
                previous = s.charAt(end - 1);
                i = end;
                continue;
            }
            out.append(c);
            if (!Character.isWhitespace(c)) {
                previous = c;
            }
            i++;
        }
        return i;
    }

    /**
     * At {@code not} (at {@code i}): when {@code not OPERAND is [not] TEST} follows, where the operand is a name with
     * attributes, subscripts, calls and filters and no space, appends {@code OPERAND is not} (or {@code OPERAND is}
     * for a double negation) and returns where the test's name starts; else appends nothing and returns {@code i}.
     */
    private static int negatedTest(String s, int i, StringBuilder out) {
        int n = s.length();
        int start = skipSpace(s, i + 3);
        if (start == i + 3 || start >= n || !Character.isJavaIdentifierStart(s.charAt(start))) {
            return i;
        }
        int end = start;
        while (end < n) {
            char c = s.charAt(end);
            if (Character.isJavaIdentifierPart(c) || c == '.' || c == '|') {
                end++;
            } else if (c == '(' || c == '[') {
                end = closing(s, end);
                if (end < 0) {
                    return i;
                }
            } else {
                break;
            }
        }
        int is = skipSpace(s, end);
        if (is == end || !s.startsWith("is", is) || is + 2 >= n || !Character.isWhitespace(s.charAt(is + 2))) {
            return i;
        }
        String operand = s.substring(start, end);
        if (operand.equals("is") || operand.equals("not")) {
            return i;
        }
        int test = skipSpace(s, is + 2);
        boolean negated = s.startsWith("not", test) && test + 3 < n && Character.isWhitespace(s.charAt(test + 3));
        // a filtered operand in parentheses: Jinjava reads no test after a filter
        out.append(operand.indexOf('|') >= 0 ? "(" + operand + ")" : operand).append(negated ? " is " : " is not ");
        return negated ? skipSpace(s, test + 3) : test;
    }

    private static int skipSpace(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }

    /** The index just past the bracket that closes the one at {@code open}, strings skipped; -1 if none does. */
    private static int closing(String s, int open) {
        int depth = 0;
        for (int i = open; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\'' || c == '"') {
                int end = i + 1;
                while (end < s.length() && s.charAt(end) != c) {
                    end += s.charAt(end) == '\\' ? 2 : 1;
                }
                i = end;
            } else if (c == '(' || c == '[') {
                depth++;
            } else if (c == ')' || c == ']') {
                if (--depth == 0) {
                    return i + 1;
                }
            }
        }
        return -1;
    }
}
