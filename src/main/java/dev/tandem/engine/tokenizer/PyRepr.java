package dev.tandem.engine.tokenizer;

import java.math.BigDecimal;
import java.util.Collection;
import java.util.Map;

/**
 * How Python prints values when a template writes them as text: {@code True}, {@code None},
 * {@code 1.5}, {@code 1e-05}, {@code ['a', 1]}, {@code {'k': 'v'}}. Jinjava would print Java's forms.
 */
final class PyRepr {

    private PyRepr() {}

    /** Python's {@code str(x)}. */
    static String str(Object v) {
        if (v instanceof String s) {
            return s;
        }
        return repr(v);
    }

    /** Python's {@code repr(x)}, for values inside lists and dicts. */
    static String repr(Object v) {
        if (v == null) {
            return "None";
        } else if (v instanceof Boolean b) {
            return b ? "True" : "False";
        } else if (v instanceof Double || v instanceof Float || v instanceof BigDecimal) {
            return floatRepr(((Number) v).doubleValue());
        } else if (v instanceof Number n) {
            return Long.toString(n.longValue());
        } else if (v instanceof Map<?, ?> m) {
            StringBuilder sb = new StringBuilder("{");
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (sb.length() > 1) {
                    sb.append(", ");
                }
                sb.append(repr(e.getKey())).append(": ").append(repr(e.getValue()));
            }
            return sb.append('}').toString();
        } else if (v instanceof Collection<?> c) {
            StringBuilder sb = new StringBuilder("[");
            for (Object o : c) {
                if (sb.length() > 1) {
                    sb.append(", ");
                }
                sb.append(repr(o));
            }
            return sb.append(']').toString();
        } else if (v instanceof CharSequence s) {
            return quote(s.toString());
        }
        return v.toString();
    }

    private static String quote(String s) {
        char q = s.contains("'") && !s.contains("\"") ? '"' : '\'';
        StringBuilder sb = new StringBuilder().append(q);
        for (char c : s.toCharArray()) {
            if (c == q || c == '\\') {
                sb.append('\\').append(c);
            } else if (c == '\n') {
                sb.append("\\n");
            } else if (c == '\r') {
                sb.append("\\r");
            } else if (c == '\t') {
                sb.append("\\t");
            } else if (c < 0x20 || c == 0x7f) {
                sb.append(String.format("\\x%02x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append(q).toString();
    }

    /** Python's float repr: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        } else if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        } else if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        BigDecimal bd = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
        String digits = bd.unscaledValue().toString();
        int exp = digits.length() - 1 - bd.scale(); // decimal exponent of the first digit
        String sign = d < 0 ? "-" : "";
        if (exp < -4 || exp >= 16) {
            String mant = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
            return sign + mant + "e" + (exp < 0 ? "-" : "+") + String.format("%02d", Math.abs(exp));
        }
        String plain = bd.toPlainString();
        return sign + (plain.contains(".") ? plain : plain + ".0");
    }
}
