package io.kvtier.router.tokens;

import java.beans.FeatureDescriptor;
import java.time.LocalDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * The Python {@code str} methods chat templates call on strings ({@code content.startswith('<tool_response>')},
 * {@code .strip()}, {@code .split('</think>')}), which Jinja2 runs as Python and Jinjava would look up as Java methods:
 * strip, lstrip, rstrip (with or without characters), startswith and endswith (a string or a list of them), split and
 * rsplit (a separator or whitespace, with a limit), upper, lower, title, capitalize, replace, find, count, join,
 * splitlines, isspace, isdigit, isalpha, isalnum. Any other method falls through to Jinjava's resolver. Also
 * {@code strftime_now}. Read-only: resolves no properties.
 */
final class PythonStrings extends ELResolver {
    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] types, Object[] params) {
        if (!(base instanceof String s) || !(method instanceof String name)) {
            return null;
        }
        Object[] p = params == null ? new Object[0] : params;
        Object result = call(s, name, p);
        if (result != NOT_A_METHOD) {
            context.setPropertyResolved(true);
        }
        return result == NOT_A_METHOD ? null : result;
    }

    private static final Object NOT_A_METHOD = new Object();

    private static Object call(String s, String name, Object[] p) {
        return switch (name) {
            case "strip" -> p.length == 0 || p[0] == null ? s.strip() : rstrip(lstrip(s, str(p[0])), str(p[0]));
            case "lstrip" -> p.length == 0 || p[0] == null ? s.stripLeading() : lstrip(s, str(p[0]));
            case "rstrip" -> p.length == 0 || p[0] == null ? s.stripTrailing() : rstrip(s, str(p[0]));
            case "startswith" -> affixes(p).stream().anyMatch(s::startsWith);
            case "endswith" -> affixes(p).stream().anyMatch(s::endsWith);
            case "split" -> split(s, p.length > 0 ? p[0] : null, p.length > 1 ? ((Number) p[1]).intValue() : -1);
            case "rsplit" -> rsplit(s, p.length > 0 ? p[0] : null, p.length > 1 ? ((Number) p[1]).intValue() : -1);
            case "upper" -> s.toUpperCase(Locale.ROOT);
            case "lower" -> s.toLowerCase(Locale.ROOT);
            case "title" -> title(s);
            case "capitalize" -> s.isEmpty() ? s : s.substring(0, 1).toUpperCase(Locale.ROOT)
                    + s.substring(1).toLowerCase(Locale.ROOT);
            case "replace" -> p.length > 2 ? replace(s, str(p[0]), str(p[1]), ((Number) p[2]).intValue())
                    : s.replace(str(p[0]), str(p[1]));
            case "find" -> (long) s.indexOf(str(p[0]));
            case "count" -> count(s, str(p[0]));
            case "join" -> join(s, p[0]);
            case "splitlines" -> s.lines().toList();
            case "isspace" -> !s.isEmpty() && s.chars().allMatch(Character::isWhitespace);
            case "isdigit" -> !s.isEmpty() && s.chars().allMatch(Character::isDigit);
            case "isalpha" -> !s.isEmpty() && s.chars().allMatch(Character::isLetter);
            case "isalnum" -> !s.isEmpty() && s.chars().allMatch(Character::isLetterOrDigit);
            default -> NOT_A_METHOD;
        };
    }

    private static String str(Object o) {
        return String.valueOf(o);
    }

    private static List<String> affixes(Object[] p) {
        if (p.length == 0) {
            throw new IllegalArgumentException("startswith/endswith takes a string or a tuple of strings");
        }
        if (p[0] instanceof Collection<?> c) {
            return c.stream().map(PythonStrings::str).toList();
        }
        return List.of(str(p[0]));
    }

    private static String lstrip(String s, String chars) {
        int i = 0;
        while (i < s.length() && chars.indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        return s.substring(i);
    }

    private static String rstrip(String s, String chars) {
        int i = s.length();
        while (i > 0 && chars.indexOf(s.charAt(i - 1)) >= 0) {
            i--;
        }
        return s.substring(0, i);
    }

    /** Python's str.split: by a separator (empty parts kept), or by runs of whitespace (none kept). */
    private static List<String> split(String s, Object sep, int max) {
        List<String> out = new ArrayList<>();
        if (sep == null) {
            int i = 0;
            int n = s.length();
            while (true) {
                while (i < n && Character.isWhitespace(s.charAt(i))) {
                    i++;
                }
                if (i == n) {
                    return out;
                }
                if (max >= 0 && out.size() == max) {
                    out.add(s.substring(i).stripTrailing());
                    return out;
                }
                int j = i;
                while (j < n && !Character.isWhitespace(s.charAt(j))) {
                    j++;
                }
                out.add(s.substring(i, j));
                i = j;
            }
        }
        String d = str(sep);
        if (d.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        int from = 0;
        int at;
        while ((max < 0 || out.size() < max) && (at = s.indexOf(d, from)) >= 0) {
            out.add(s.substring(from, at));
            from = at + d.length();
        }
        out.add(s.substring(from));
        return out;
    }

    /** Python's str.rsplit with a separator; without one, or without a limit, it splits as split does. */
    private static List<String> rsplit(String s, Object sep, int max) {
        if (sep == null || max < 0) {
            return split(s, sep, max);
        }
        String d = str(sep);
        List<String> out = new ArrayList<>();
        int end = s.length();
        int at;
        while (out.size() < max && (at = s.lastIndexOf(d, end - d.length())) >= 0 && end - d.length() >= 0) {
            out.addFirst(s.substring(at + d.length(), end));
            end = at;
        }
        out.addFirst(s.substring(0, end));
        return out;
    }

    /** Python's str.title: a letter after a non-letter upper case, others lower case. */
    private static String title(String s) {
        StringBuilder b = new StringBuilder(s.length());
        boolean previousCased = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            b.append(previousCased ? Character.toLowerCase(c) : Character.toUpperCase(c));
            previousCased = Character.isLetter(c);
        }
        return b.toString();
    }

    private static String replace(String s, String from, String to, int max) {
        if (max < 0) {
            return s.replace(from, to);
        }
        StringBuilder b = new StringBuilder();
        int i = 0;
        int at;
        int done = 0;
        while (done < max && !from.isEmpty() && (at = s.indexOf(from, i)) >= 0) {
            b.append(s, i, at).append(to);
            i = at + from.length();
            done++;
        }
        return b.append(s.substring(i)).toString();
    }

    private static long count(String s, String sub) {
        if (sub.isEmpty()) {
            return s.length() + 1L;
        }
        long n = 0;
        for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
            n++;
        }
        return n;
    }

    private static String join(String separator, Object items) {
        if (!(items instanceof Iterable<?> it)) {
            throw new IllegalArgumentException("join takes a list of strings");
        }
        List<String> parts = new ArrayList<>();
        it.forEach(x -> parts.add(str(x)));
        return String.join(separator, parts);
    }

    /**
     * The template global {@code strftime_now(format)}: the local time now in a Python strftime format ({@code %d},
     * {@code %m}, {@code %Y}, {@code %y}, {@code %b}, {@code %B}, {@code %a}, {@code %A}, {@code %H}, {@code %M},
     * {@code %S}, {@code %j}, {@code %p}, {@code %%}; others are kept as written).
     */
    public static String strftimeNow(String format) {
        return strftime(LocalDateTime.now(), format);
    }

    static String strftime(LocalDateTime t, String format) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                b.append(c);
                continue;
            }
            char f = format.charAt(++i);
            switch (f) {
                case 'd' -> b.append(String.format(Locale.ROOT, "%02d", t.getDayOfMonth()));
                case 'm' -> b.append(String.format(Locale.ROOT, "%02d", t.getMonthValue()));
                case 'Y' -> b.append(t.getYear());
                case 'y' -> b.append(String.format(Locale.ROOT, "%02d", t.getYear() % 100));
                case 'b' -> b.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'B' -> b.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'a' -> b.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> b.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'H' -> b.append(String.format(Locale.ROOT, "%02d", t.getHour()));
                case 'M' -> b.append(String.format(Locale.ROOT, "%02d", t.getMinute()));
                case 'S' -> b.append(String.format(Locale.ROOT, "%02d", t.getSecond()));
                case 'j' -> b.append(String.format(Locale.ROOT, "%03d", t.getDayOfYear()));
                case 'p' -> b.append(t.getHour() < 12 ? "AM" : "PM");
                case '%' -> b.append('%');
                default -> b.append('%').append(f);
            }
        }
        return b.toString();
    }

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {
        // resolves nothing: the next resolver answers
    }

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
