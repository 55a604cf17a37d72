package dev.tandem.api;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** The characters of text in a JSON value (strings anywhere inside it), counted up to a limit. */
final class TextLength {
    private TextLength() {}

    /** The total length of every string in {@code value}, or some number over {@code limit} once past it. */
    static int of(Object value, int limit) {
        if (value instanceof String s) {
            return s.length();
        }
        int total = 0;
        if (value instanceof JsonArray array) {
            for (Object item : array) {
                total += of(item, limit - total);
                if (total > limit) {
                    return total;
                }
            }
        } else if (value instanceof JsonObject object) {
            for (var entry : object) {
                total += entry.getKey().length() + of(entry.getValue(), limit - total);
                if (total > limit) {
                    return total;
                }
            }
        }
        return total;
    }
}
