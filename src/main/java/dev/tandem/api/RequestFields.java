package dev.tandem.api;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.BigInteger;

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

    /**
     * An integer field within [{@code min}, {@code max}], or {@code dflt} when absent. Only an exact
     * integer counts (5.0 and 5e0 do; 5.5 does not), and one outside the range is refused rather than
     * clamped: 2^64 or 1e308 must not quietly become Long.MAX_VALUE.
     */
    static long integer(JsonObject body, String field, long dflt, long min, long max) {
        Object v = body.getValue(field);
        if (v == null) {
            return dflt;
        }
        return inRange(field, exactInteger(field, v), min, max);
    }

    /** An integer field within [{@code min}, {@code max}], or null when absent. */
    static Long optionalInteger(JsonObject body, String field, long min, long max) {
        Object v = body.getValue(field);
        return v == null ? null : inRange(field, exactInteger(field, v), min, max);
    }

    private static long inRange(String field, BigInteger value, long min, long max) {
        if (value.compareTo(BigInteger.valueOf(min)) < 0 || value.compareTo(BigInteger.valueOf(max)) > 0) {
            throw ApiException.invalid(
                    field,
                    "'" + field + "' must be an integer " + range(min, max) + ", got " + shortened(value.toString()));
        }
        return value.longValueExact();
    }

    private static String range(long min, long max) {
        if (min == max) {
            return "equal to " + min;
        }
        return "from " + min + " to " + max;
    }

    /** A number's digits in a message, without echoing a megabyte of them. */
    private static String shortened(String digits) {
        return digits.length() <= 40 ? digits : digits.substring(0, 20) + "…(" + digits.length() + " digits)";
    }

    /** The exact integer a JSON number is, or a 400 naming the field when it is not one. */
    static BigInteger exactInteger(String field, Object v) {
        BigInteger exact = exactInteger(v);
        if (exact == null) {
            throw ApiException.invalidType(field, "an integer");
        }
        return exact;
    }

    /** The exact integer a JSON value is, or null (not a number, fractional, infinite, NaN). */
    static BigInteger exactInteger(Object v) {
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            return BigInteger.valueOf(((Number) v).longValue());
        }
        if (v instanceof BigInteger b) {
            return b;
        }
        if (v instanceof BigDecimal d) {
            // An exponent like 1e999999999 must not be expanded into a billion digits.
            if (d.precision() - d.scale() > 400) {
                return d.signum() > 0
                        ? BigInteger.TEN.pow(400)
                        : BigInteger.TEN.pow(400).negate();
            }
            try {
                return d.toBigIntegerExact();
            } catch (ArithmeticException e) {
                return null;
            }
        }
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (!Double.isFinite(d) || d != Math.rint(d)) {
                return null;
            }
            return new BigDecimal(d).toBigIntegerExact();
        }
        return null;
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
