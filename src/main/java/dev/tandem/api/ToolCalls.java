package dev.tandem.api;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/**
 * An assistant message's OpenAI {@code tool_calls}, as HF chat templates take them: each function's
 * {@code arguments} JSON string parsed into an object (what vLLM does before applying a template);
 * arguments that are not a JSON object stay a string.
 */
final class ToolCalls {

    private ToolCalls() {}

    /** The calls as plain maps and lists, or null when the message has none. */
    static List<Object> parse(Object value, String param) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof JsonArray calls)) {
            throw ApiException.invalidType(param + ".tool_calls", "an array of tool calls");
        }
        List<Object> out = ChatPrompts.plainList(calls);
        for (int i = 0; i < out.size(); i++) {
            String p = param + ".tool_calls[" + i + "]";
            if (!(out.get(i) instanceof Map<?, ?> call)
                    || !(call.get("function") instanceof Map<?, ?> fn)
                    || !(fn.get("name") instanceof String)) {
                throw ApiException.invalidType(
                        p, "a tool call {\"type\": \"function\", \"function\": {\"name\", \"arguments\"}}");
            }
            if (fn.get("arguments") instanceof String args) {
                @SuppressWarnings("unchecked")
                Map<String, Object> f = (Map<String, Object>) fn;
                f.put("arguments", arguments(args));
            }
        }
        return out;
    }

    private static Object arguments(String json) {
        try {
            Object parsed = new JsonObject(json);
            return ChatPrompts.plain((JsonObject) parsed);
        } catch (DecodeException | ClassCastException e) {
            return json;
        }
    }
}
