package dev.tandem.engine.tokenizer;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Python's {@code json.dumps(x, ensure_ascii=False, indent=…, separators=…, sort_keys=…)}, byte for
 * byte: chat templates print tools and tool-call arguments with {@code tojson}, and the model was
 * trained on Python's spacing (", " and ": "), its float repr and its escapes.
 */
final class PyJson {

    private final String indent;
    private final String itemSeparator;
    private final String keySeparator;
    private final boolean sortKeys;
    private final boolean ensureAscii;

    /**
     * @param indent null for one line, else the indent unit (Python's int n means n spaces)
     * @param separators null for Python's defaults ({@code ", "} or, when indenting, {@code ","};
     *     {@code ": "})
     */
    PyJson(String indent, List<String> separators, boolean sortKeys, boolean ensureAscii) {
        this.indent = indent;
        this.itemSeparator = separators != null ? separators.get(0) : indent == null ? ", " : ",";
        this.keySeparator = separators != null ? separators.get(1) : ": ";
        this.sortKeys = sortKeys;
        this.ensureAscii = ensureAscii;
    }

    static String dumps(Object value) {
        return new PyJson(null, null, false, false).write(value);
    }

    String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, 0);
        return sb.toString();
    }

    private void write(StringBuilder sb, Object v, int level) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Boolean b) {
            sb.append(b ? "true" : "false");
        } else if (v instanceof Double || v instanceof Float || v instanceof BigDecimal) {
            sb.append(PyRepr.floatRepr(((Number) v).doubleValue()));
        } else if (v instanceof Number n) {
            sb.append(n.longValue());
        } else if (v instanceof Map<?, ?> m) {
            writeMap(sb, m, level);
        } else if (v instanceof Collection<?> c) {
            writeList(sb, c, level);
        } else if (v instanceof Object[] a) {
            writeList(sb, List.of(a), level);
        } else {
            quote(sb, v.toString(), ensureAscii);
        }
    }

    private void writeMap(StringBuilder sb, Map<?, ?> m, int level) {
        if (m.isEmpty()) {
            sb.append("{}");
            return;
        }
        List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
        if (sortKeys) {
            entries.sort((x, y) -> String.valueOf(x.getKey()).compareTo(String.valueOf(y.getKey())));
        }
        sb.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : entries) {
            if (!first) {
                sb.append(itemSeparator);
            }
            first = false;
            newline(sb, level + 1);
            quote(sb, String.valueOf(e.getKey()), ensureAscii);
            sb.append(keySeparator);
            write(sb, e.getValue(), level + 1);
        }
        newline(sb, level);
        sb.append('}');
    }

    private void writeList(StringBuilder sb, Collection<?> c, int level) {
        if (c.isEmpty()) {
            sb.append("[]");
            return;
        }
        sb.append('[');
        boolean first = true;
        for (Object o : c) {
            if (!first) {
                sb.append(itemSeparator);
            }
            first = false;
            newline(sb, level + 1);
            write(sb, o, level + 1);
        }
        newline(sb, level);
        sb.append(']');
    }

    private void newline(StringBuilder sb, int level) {
        if (indent != null) {
            sb.append('\n').append(indent.repeat(level));
        }
    }

    /** A JSON string as Python writes it: '"', '\\' and controls escaped, and non-ASCII if asked. */
    static void quote(StringBuilder sb, String s, boolean ensureAscii) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20 || (ensureAscii && c > 0x7f)) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
