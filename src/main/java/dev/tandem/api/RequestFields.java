package dev.tandem.api;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** Typed reads of OpenAI request fields; a wrong type is a 400 that names the field. */
final class RequestFields {
    private RequestFields() {}

    static String string(JsonObject body, String field) {
        Object v = body.getValue(field);
        if (v == null || v instanceof String) {
            return (String) v;
        }
        throw ApiException.invalidType(field, "a string");
    }

    static double number(JsonObject body, String field, double dflt) {
        Object v = body.getValue(field);
        if (v == null) {
            return dflt;
        }
        if (v instanceof Number n && Double.isFinite(n.doubleValue())) {
            return n.doubleValue();
        }
        throw ApiException.invalidType(field, "a number");
    }

    /** An integer; JSON numbers like 5.0 count, 5.5 does not; values past the long range saturate. */
    static long integer(JsonObject body, String field, long dflt) {
        Object v = body.getValue(field);
        if (v == null) {
            return dflt;
        }
        if (v instanceof Number n
                && Double.isFinite(n.doubleValue())
                && n.doubleValue() == Math.rint(n.doubleValue())) {
            return n.longValue();
        }
        throw ApiException.invalidType(field, "an integer");
    }

    static boolean bool(JsonObject body, String field, boolean dflt) {
        Object v = body.getValue(field);
        if (v == null) {
            return dflt;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        throw ApiException.invalidType(field, "a boolean");
    }

    static JsonObject object(JsonObject body, String field) {
        Object v = body.getValue(field);
        if (v == null || v instanceof JsonObject) {
            return (JsonObject) v;
        }
        throw ApiException.invalidType(field, "an object");
    }

    static JsonArray array(JsonObject body, String field) {
        Object v = body.getValue(field);
        if (v == null || v instanceof JsonArray) {
            return (JsonArray) v;
        }
        throw ApiException.invalidType(field, "an array");
    }

    /** True when a field is present with a value that asks for something (not null, false, 0, "" or empty). */
    static boolean asksFor(Object value) {
        if (value == null || Boolean.FALSE.equals(value) || "".equals(value)) {
            return false;
        }
        if (value instanceof Number n) {
            return n.doubleValue() != 0;
        }
        if (value instanceof JsonArray a) {
            return !a.isEmpty();
        }
        if (value instanceof JsonObject o) {
            return !o.isEmpty();
        }
        return true;
    }
}
