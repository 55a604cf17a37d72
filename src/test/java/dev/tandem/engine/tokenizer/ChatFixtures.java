package dev.tandem.engine.tokenizer;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** conversations.json's entries as ChatPrompts (JSON objects to plain ordered maps and lists). */
final class ChatFixtures {

    private ChatFixtures() {}

    static ChatPrompt prompt(JsonObject conv) {
        List<ChatMessage> messages = new ArrayList<>();
        for (Object o : conv.getJsonArray("messages")) {
            JsonObject m = (JsonObject) o;
            JsonArray calls = m.getJsonArray("tool_calls");
            messages.add(new ChatMessage(
                    m.getString("role"),
                    m.getString("content"),
                    calls == null ? null : plainList(calls),
                    m.getString("tool_call_id"),
                    m.getString("name"),
                    m.getString("reasoning_content")));
        }
        JsonArray tools = conv.getJsonArray("tools");
        JsonObject kwargs = conv.getJsonObject("chat_template_kwargs", new JsonObject());
        return new ChatPrompt(
                messages,
                tools == null ? null : plainList(tools),
                conv.getBoolean("add_generation_prompt", true),
                conv.getBoolean("continue_final_message", false),
                plainMap(kwargs));
    }

    static Map<String, Object> plainMap(JsonObject o) {
        Map<String, Object> out = new LinkedHashMap<>();
        o.forEach(e -> out.put(e.getKey(), plain(e.getValue())));
        return out;
    }

    static List<Object> plainList(JsonArray a) {
        List<Object> out = new ArrayList<>();
        a.forEach(v -> out.add(plain(v)));
        return out;
    }

    private static Object plain(Object v) {
        if (v instanceof JsonObject o) {
            return plainMap(o);
        } else if (v instanceof JsonArray a) {
            return plainList(a);
        }
        return v;
    }
}
