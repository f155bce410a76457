package io.kvtier.router.tokens;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.AdvancedFilter;
import java.math.BigDecimal;
import java.util.Map;

/**
 * Python's {@code json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...)} for the values a chat
 * template sees: what transformers installs as the templates' {@code tojson} filter (Jinja2's own would escape HTML
 * characters). Byte for byte as Python writes them, floats included ({@code repr}: shortest digits, exponent below
 * 1e-4 and from 1e16).
 */
final class PythonJson {
    private PythonJson() {
    }

    static String dumps(Object value, Integer indent, String itemSeparator, String keySeparator, boolean sortKeys) {
        StringBuilder out = new StringBuilder();
        String items = itemSeparator != null ? itemSeparator : indent == null ? ", " : ",";
        String keys = keySeparator != null ? keySeparator : ": ";
        write(out, value, indent, items, keys, sortKeys, 0);
        return out.toString();
    }

    private static void write(StringBuilder out, Object v, Integer indent, String items, String keys, boolean sort,
                              int depth) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof Boolean b) {
            out.append(b ? "true" : "false");
        } else if (v instanceof Double || v instanceof Float) {
            out.append(floatRepr(((Number) v).doubleValue()));
        } else if (v instanceof Number n) {
            out.append(n);
        } else if (v instanceof CharSequence s) {
            string(out, s.toString());
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                out.append("{}");
                return;
            }
            var entries = new java.util.ArrayList<Map.Entry<?, ?>>(m.entrySet());
            if (sort) {
                entries.sort(java.util.Comparator.comparing(e -> String.valueOf(e.getKey())));
            }
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : entries) {
                if (!first) {
                    out.append(items);
                }
                first = false;
                newline(out, indent, depth + 1);
                string(out, String.valueOf(e.getKey()));
                out.append(keys);
                write(out, e.getValue(), indent, items, keys, sort, depth + 1);
            }
            newline(out, indent, depth);
            out.append('}');
        } else if (v instanceof Iterable<?> l) {
            if (!l.iterator().hasNext()) {
                out.append("[]");
                return;
            }
            out.append('[');
            boolean first = true;
            for (Object x : l) {
                if (!first) {
                    out.append(items);
                }
                first = false;
                newline(out, indent, depth + 1);
                write(out, x, indent, items, keys, sort, depth + 1);
            }
            newline(out, indent, depth);
            out.append(']');
        } else {
            throw new IllegalArgumentException("Object of type " + v.getClass().getSimpleName()
                    + " is not JSON serializable");
        }
    }

    private static void newline(StringBuilder out, Integer indent, int depth) {
        if (indent != null) {
            out.append('\n').append(" ".repeat(indent * depth));
        }
    }

    private static void string(StringBuilder out, String s) {
        io.kvtier.common.Json.quote(s, out);
    }

    /** Python's repr of a float: the shortest digits that read back, in plain or exponent form as Python picks. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        if (d == 0) {
            return 1 / d < 0 ? "-0.0" : "0.0";
        }
        BigDecimal shortest = new BigDecimal(Double.toString(d)).stripTrailingZeros();
        String digits = shortest.unscaledValue().abs().toString();
        int exponent = digits.length() - 1 - shortest.scale(); // d = 0.digits... as digits[0].digits[1..] x 10^exponent
        String sign = d < 0 ? "-" : "";
        if (exponent < -4 || exponent >= 16) {
            String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
            return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + String.format("%02d", Math.abs(exponent));
        }
        if (exponent < 0) {
            return sign + "0." + "0".repeat(-exponent - 1) + digits;
        }
        if (digits.length() <= exponent + 1) {
            return sign + digits + "0".repeat(exponent + 1 - digits.length()) + ".0";
        }
        return sign + digits.substring(0, exponent + 1) + "." + digits.substring(exponent + 1);
    }

    /** The {@code tojson} filter: {@code x | tojson}, {@code x | tojson(indent=2)}, separators and sort_keys too. */
    static final class ToJsonFilter implements AdvancedFilter {
        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object indent = kwargs.get("indent");
            Object separators = kwargs.get("separators");
            String items = null;
            String keys = null;
            if (separators instanceof java.util.List<?> pair && pair.size() == 2) {
                items = String.valueOf(pair.get(0));
                keys = String.valueOf(pair.get(1));
            }
            return dumps(var, indent == null ? null : ((Number) indent).intValue(), items, keys,
                    Boolean.TRUE.equals(kwargs.get("sort_keys")));
        }
    }
}
