package dev.tandem.bench.trace;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;

/**
 * Mooncake JSONL: {@code {"timestamp": ms, "input_length": n, "output_length": m, "hash_ids": [...]}}
 * a line. Other fields are ignored, so a trace with extra columns still replays.
 */
final class MooncakeLineParser implements TraceLineParser {
    private final ArrivalClock clock = new ArrivalClock(1);

    @Override
    public TraceRequest parse(String line) {
        JsonObject json;
        try {
            json = new JsonObject(line);
        } catch (DecodeException | ClassCastException e) {
            throw new BadTraceLine("not a JSON object: " + firstLine(e.getMessage()));
        }
        long timestamp = integer(json, "timestamp", 0, Long.MAX_VALUE);
        int input = (int) integer(json, "input_length", 1, Integer.MAX_VALUE);
        int output = (int) integer(json, "output_length", 1, Integer.MAX_VALUE);
        long[] hashIds = hashIds(json, input);
        return new TraceRequest(clock.arrivalMs(timestamp, Long.toString(timestamp)), input, output, hashIds);
    }

    private static long[] hashIds(JsonObject json, int input) {
        Object value = required(json, "hash_ids");
        if (!(value instanceof JsonArray array)) {
            throw new BadTraceLine("field 'hash_ids' must be an array of integers, got " + describe(value));
        }
        // Exact on every public Mooncake trace (conversation and synthetic: every line has ceil(input/512) ids),
        // and TraceTokens derives each prompt token from the id of its block, so nothing looser is accepted.
        int expected = TraceRequest.blocksFor(input);
        if (array.size() != expected) {
            throw new BadTraceLine("field 'hash_ids' has " + array.size() + " ids but input_length " + input + " spans "
                    + expected + " blocks of " + TraceTokens.TRACE_BLOCK_TOKENS + " tokens");
        }
        long[] ids = new long[array.size()];
        for (int i = 0; i < ids.length; i++) {
            Object id = array.getValue(i);
            if (!isInteger(id)) {
                throw new BadTraceLine("hash_ids[" + i + "] must be an integer, got " + describe(id));
            }
            ids[i] = ((Number) id).longValue();
            if (ids[i] < 0) {
                throw new BadTraceLine("hash_ids[" + i + "] is negative: " + ids[i]);
            }
        }
        return ids;
    }

    /** A required integer field within [min, max]. */
    private static long integer(JsonObject json, String field, long min, long max) {
        Object value = required(json, field);
        if (!isInteger(value)) {
            throw new BadTraceLine("field '" + field + "' must be an integer, got " + describe(value));
        }
        long v = ((Number) value).longValue();
        if (v < min || v > max) {
            throw new BadTraceLine("field '" + field + "' must be "
                    + (min == 0 ? "non-negative" : "positive")
                    + (max == Integer.MAX_VALUE ? " and fit an int" : "") + ", got " + v);
        }
        return v;
    }

    private static Object required(JsonObject json, String field) {
        Object value = json.getValue(field);
        if (value == null) {
            throw new BadTraceLine(
                    json.containsKey(field) ? "field '" + field + "' is null" : "missing field '" + field + "'");
        }
        return value;
    }

    // Jackson gives Integer or Long for an integer literal, BigInteger beyond 64 bits, Double for 1.0 or 1e3:
    // a length written as a float is a broken export, not something to round.
    private static boolean isInteger(Object value) {
        return value instanceof Integer || value instanceof Long;
    }

    private static String describe(Object value) {
        if (value instanceof String s) {
            return "the string \"" + s + "\"";
        }
        if (value instanceof BigInteger) {
            return value + ", beyond 64 bits";
        }
        return value instanceof Number ? value.toString() : value.getClass().getSimpleName();
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}
