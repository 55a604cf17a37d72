package dev.tandem.protocol;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** Typed reads of required and optional fields, failing with a message that names the field. */
final class JsonFields {
    private JsonFields() {}

    static JsonObject object(Object body) {
        if (body instanceof JsonObject json) {
            return json;
        }
        throw new ProtocolException("expected a JSON object, got "
                + (body == null ? "nothing" : body.getClass().getSimpleName()));
    }

    static long requiredLong(JsonObject json, String field) {
        Object v = json.getValue(field);
        if (v instanceof Number n && n.doubleValue() == n.longValue()) {
            return n.longValue();
        }
        throw new ProtocolException("field '" + field + "' must be an integer");
    }

    static int requiredInt(JsonObject json, String field) {
        long v = requiredLong(json, field);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new ProtocolException("field '" + field + "' is out of range");
        }
        return (int) v;
    }

    static double requiredDouble(JsonObject json, String field) {
        Object v = json.getValue(field);
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        throw new ProtocolException("field '" + field + "' must be a number");
    }

    static String requiredString(JsonObject json, String field) {
        Object v = json.getValue(field);
        if (v instanceof String s && !s.isEmpty()) {
            return s;
        }
        throw new ProtocolException("field '" + field + "' must be a non-empty string");
    }

    static String optionalString(JsonObject json, String field) {
        Object v = json.getValue(field);
        if (v == null || v instanceof String) {
            return (String) v;
        }
        throw new ProtocolException("field '" + field + "' must be a string");
    }

    /** An int field that may be left out ({@code dflt} then); a wrong type is still an error. */
    static int optionalInt(JsonObject json, String field, int dflt) {
        return json.getValue(field) == null ? dflt : requiredInt(json, field);
    }

    static JsonObject requiredObject(JsonObject json, String field) {
        Object v = json.getValue(field);
        if (v instanceof JsonObject o) {
            return o;
        }
        throw new ProtocolException("field '" + field + "' must be an object");
    }

    static int[] requiredInts(JsonObject json, String field) {
        Object v = json.getValue(field);
        if (!(v instanceof JsonArray array)) {
            throw new ProtocolException("field '" + field + "' must be an array of integers");
        }
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            Object e = array.getValue(i);
            if (!(e instanceof Number n) || n.doubleValue() != n.intValue()) {
                throw new ProtocolException("field '" + field + "' must be an array of integers");
            }
            out[i] = n.intValue();
        }
        return out;
    }

    static long[] requiredLongs(JsonObject json, String field) {
        Object v = json.getValue(field);
        if (!(v instanceof JsonArray array)) {
            throw new ProtocolException("field '" + field + "' must be an array of integers");
        }
        long[] out = new long[array.size()];
        for (int i = 0; i < out.length; i++) {
            Object e = array.getValue(i);
            if (!(e instanceof Integer || e instanceof Long)) {
                throw new ProtocolException("field '" + field + "' must be an array of 64-bit integers");
            }
            out[i] = ((Number) e).longValue();
        }
        return out;
    }

    static JsonArray longs(long[] values) {
        JsonArray array = new JsonArray();
        for (long v : values) {
            array.add(v);
        }
        return array;
    }

    static boolean optionalBoolean(JsonObject json, String field, boolean dflt) {
        Object v = json.getValue(field);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof Boolean b)) {
            throw new ProtocolException("field '" + field + "' must be a boolean");
        }
        return b;
    }

    static JsonArray ints(int[] values) {
        JsonArray array = new JsonArray(new java.util.ArrayList<>(values.length));
        for (int v : values) {
            array.add(v);
        }
        return array;
    }
}
