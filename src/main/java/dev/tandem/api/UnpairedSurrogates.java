package dev.tandem.api;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/**
 * JSON may escape a lone UTF-16 surrogate ({@code "\ud800"}): valid JSON, yet no character, and UTF-8 cannot
 * encode it (Java writes '?'). A client string holding one came back as "?" where it is echoed (a WebSocket
 * id, a model name in an error) and was tokenized as "?" in a prompt; it is refused instead, by name.
 */
public final class UnpairedSurrogates {
    private UnpairedSurrogates() {}

    /** Whether {@code s} holds a surrogate that is not half of a high-low pair. */
    public static boolean in(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    /** A 400 naming the top-level field of {@code body} with such a string anywhere inside it, if one has. */
    static void refuseIn(JsonObject body) {
        for (Map.Entry<String, Object> field : body.getMap().entrySet()) {
            if (holds(field.getValue())) {
                throw invalid(field.getKey());
            }
        }
    }

    public static ApiException invalid(String param) {
        return ApiException.invalid(
                param,
                "'" + param + "' holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair),"
                        + " which is no character: UTF-8 cannot carry it");
    }

    /** Values only: an unknown key is ignored whatever it holds. Nesting is bounded by the JSON parser. */
    private static boolean holds(Object value) {
        if (value instanceof String s) {
            return in(s);
        }
        if (value instanceof JsonObject o) {
            return holds(o.getMap());
        }
        if (value instanceof JsonArray a) {
            return holds(a.getList());
        }
        if (value instanceof Map<?, ?> m) {
            return m.values().stream().anyMatch(UnpairedSurrogates::holds);
        }
        if (value instanceof List<?> l) {
            return l.stream().anyMatch(UnpairedSurrogates::holds);
        }
        return false;
    }
}
