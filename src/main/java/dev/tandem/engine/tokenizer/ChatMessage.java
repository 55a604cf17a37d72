package dev.tandem.engine.tokenizer;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One turn of a chat, as an OpenAI request carries it: a role (system, user, assistant, tool, …),
 * its text, and for tool use the assistant's {@code tool_calls} (arguments as JSON objects, as HF
 * templates expect them) or the answered call's {@code tool_call_id} and {@code name}.
 *
 * @param content the text; null only for an assistant turn that only calls tools
 * @param toolCalls OpenAI {@code tool_calls} as plain maps and lists, or null
 * @param reasoningContent a reasoning model's thinking for this turn, or null
 */
public record ChatMessage(
        String role, String content, List<Object> toolCalls, String toolCallId, String name, String reasoningContent) {

    public ChatMessage(String role, String content) {
        this(role, content, null, null, null, null);
    }

    /**
     * The message as a template sees it (a Python dict in HF): role and content always, the others
     * only when set, so {@code message.tool_calls is defined} means what it means in Python.
     */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("role", role);
        m.put("content", content);
        putIfSet(m, "tool_calls", toolCalls);
        putIfSet(m, "tool_call_id", toolCallId);
        putIfSet(m, "name", name);
        putIfSet(m, "reasoning_content", reasoningContent);
        return m;
    }

    private static void putIfSet(Map<String, Object> m, String key, Object value) {
        if (value != null) {
            m.put(key, value);
        }
    }
}
