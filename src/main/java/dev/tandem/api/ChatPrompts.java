package dev.tandem.api;

import dev.tandem.engine.tokenizer.ChatMessage;
import dev.tandem.engine.tokenizer.ChatPrompt;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A chat body's messages and template options as a {@link ChatPrompt}: what vLLM's chat endpoint
 * hands its model's template — {@code messages} (with tool calls and tool results),
 * {@code tools}, {@code add_generation_prompt} (default true), {@code continue_final_message} and
 * {@code chat_template_kwargs}. Tool use needs the model's own template: {@link #refuseToolsFor}.
 */
final class ChatPrompts {

    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");

    private ChatPrompts() {}

    static ChatPrompt parse(JsonObject body) {
        List<ChatMessage> messages = messages(body.getValue("messages"));
        boolean continueFinal = RequestFields.bool(body, "continue_final_message", false);
        boolean generationPrompt = RequestFields.bool(body, "add_generation_prompt", true);
        if (continueFinal && generationPrompt && body.getValue("add_generation_prompt") != null) {
            throw ApiException.invalid(
                    "continue_final_message",
                    "'continue_final_message' and 'add_generation_prompt' cannot both be true");
        }
        JsonObject kwargs = RequestFields.object(body, "chat_template_kwargs");
        Object tools = body.getValue("tools");
        if (tools != null && !(tools instanceof JsonArray)) {
            throw ApiException.invalidType("tools", "an array of tools");
        }
        JsonArray toolList = (JsonArray) tools;
        return new ChatPrompt(
                messages,
                toolList == null || toolList.isEmpty() ? null : plainList(toolList),
                generationPrompt && !continueFinal,
                continueFinal,
                kwargs == null ? null : plain(kwargs));
    }

    /**
     * Tandem's built-in templates (role-tags, llama2) cannot write tools or tool turns: for such a
     * model a chat that has them is refused as before, by name.
     */
    static void refuseToolsFor(boolean builtinTemplate, ChatPrompt chat) {
        if (!builtinTemplate) {
            return;
        }
        if (chat.tools() != null) {
            throw OpenAiRequestParser.unsupported("tools", "'tools' is not supported by this server");
        }
        for (int i = 0; i < chat.messages().size(); i++) {
            ChatMessage m = chat.messages().get(i);
            if (m.role().equals("tool") || m.toolCalls() != null) {
                throw OpenAiRequestParser.unsupported(
                        "messages[" + i + "]" + (m.role().equals("tool") ? ".role" : ".tool_calls"),
                        "tool messages are not supported by this model's chat template");
            }
        }
    }

    private static List<ChatMessage> messages(Object value) {
        if (!(value instanceof JsonArray array)) {
            throw value == null
                    ? ApiException.invalid("messages", "'messages' is required")
                    : ApiException.invalidType("messages", "an array of messages");
        }
        if (array.isEmpty()) {
            throw ApiException.invalid("messages", "'messages' must not be empty");
        }
        List<ChatMessage> out = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            String param = "messages[" + i + "]";
            if (!(array.getValue(i) instanceof JsonObject m)) {
                throw ApiException.invalidType(param, "an object with 'role' and 'content'");
            }
            Object role = m.getValue("role");
            if (!(role instanceof String r) || !ROLES.contains(r)) {
                throw ApiException.invalid(param + ".role", "'role' must be one of " + ROLES);
            }
            List<Object> calls = "assistant".equals(r) ? ToolCalls.parse(m.getValue("tool_calls"), param) : null;
            // An assistant turn that only calls tools may have no content (null, as HF templates test it).
            Object rawContent = m.getValue("content");
            String content = rawContent == null && calls != null ? null : content(rawContent, param + ".content");
            out.add(new ChatMessage(
                    r,
                    content,
                    calls,
                    optionalString(m, "tool_call_id", param),
                    optionalString(m, "name", param),
                    optionalString(m, "reasoning_content", param)));
        }
        return out;
    }

    private static String optionalString(JsonObject m, String field, String param) {
        Object v = m.getValue(field);
        if (v != null && !(v instanceof String)) {
            throw ApiException.invalidType(param + "." + field, "a string");
        }
        return (String) v;
    }

    private static String content(Object value, String param) {
        if (value instanceof String s) {
            return s;
        }
        if (!(value instanceof JsonArray parts)) {
            throw ApiException.invalidType(param, "a string or an array of text parts");
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < parts.size(); i++) {
            if (!(parts.getValue(i) instanceof JsonObject part) || !(part.getValue("text") instanceof String text)) {
                throw ApiException.invalidType(param + "[" + i + "]", "a text part {\"type\": \"text\", \"text\": …}");
            }
            if (!"text".equals(part.getValue("type"))) {
                throw OpenAiRequestParser.unsupported(
                        param + "[" + i + "].type", "only text content parts are supported");
            }
            sb.append(text);
        }
        return sb.toString();
    }

    /** JSON as the plain maps and lists a template reads (Python dicts and lists in HF). */
    static Map<String, Object> plain(JsonObject o) {
        Map<String, Object> out = new LinkedHashMap<>();
        o.forEach(e -> out.put(e.getKey(), plainValue(e.getValue())));
        return out;
    }

    static List<Object> plainList(JsonArray a) {
        List<Object> out = new ArrayList<>();
        a.forEach(x -> out.add(plainValue(x)));
        return out;
    }

    private static Object plainValue(Object v) {
        if (v instanceof JsonObject o) {
            return plain(o);
        } else if (v instanceof JsonArray a) {
            List<Object> out = new ArrayList<>();
            a.forEach(x -> out.add(plainValue(x)));
            return out;
        }
        return v;
    }
}
