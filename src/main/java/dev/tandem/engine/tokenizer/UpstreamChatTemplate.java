package dev.tandem.engine.tokenizer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The chat template of a vLLM server, applied by the server: chats are tokenized by its
 * {@code /tokenize} with {@code messages} (vLLM's TokenizeChatRequest), so the prompt is exactly
 * what its own {@code /v1/chat/completions} would make. For upstream workers without the model's
 * directory. There is no text to render here: {@link #encodeOnServer} gives the token ids.
 */
public final class UpstreamChatTemplate implements ChatTemplate {

    /** The name a model card gives this template. */
    public static final String NAME = "upstream";

    private final UpstreamTokenizer tokenizer;

    public UpstreamChatTemplate(UpstreamTokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String render(List<ChatMessage> messages) {
        throw new UnsupportedOperationException("the upstream server renders this model's chats");
    }

    @Override
    public int[] encodeOnServer(ChatPrompt prompt) {
        return tokenizer.encodeChat(prompt);
    }

    /**
     * The TokenizeChatRequest fields for a chat: messages as OpenAI writes them (tool-call arguments
     * back to JSON strings, which vLLM parses), add_generation_prompt, continue_final_message,
     * add_special_tokens false (the template writes BOS), chat_template_kwargs and tools when set.
     */
    public static Map<String, Object> request(ChatPrompt prompt) {
        List<Object> messages = new ArrayList<>();
        for (ChatMessage m : prompt.messages()) {
            Map<String, Object> map = m.toMap();
            if (m.toolCalls() != null) {
                map.put("tool_calls", openAiToolCalls(m.toolCalls()));
            }
            messages.add(map);
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("messages", messages);
        r.put("add_generation_prompt", prompt.addGenerationPrompt());
        r.put("continue_final_message", prompt.continueFinalMessage());
        r.put("add_special_tokens", false);
        if (!prompt.kwargs().isEmpty()) {
            r.put("chat_template_kwargs", prompt.kwargs());
        }
        if (prompt.tools() != null) {
            r.put("tools", prompt.tools());
        }
        return r;
    }

    private static List<Object> openAiToolCalls(List<Object> calls) {
        List<Object> out = new ArrayList<>();
        for (Object c : calls) {
            if (c instanceof Map<?, ?> call
                    && call.get("function") instanceof Map<?, ?> fn
                    && !(fn.get("arguments") instanceof String)) {
                Map<String, Object> f = new LinkedHashMap<>();
                fn.forEach((k, v) -> f.put(String.valueOf(k), v));
                f.put("arguments", PyJson.dumps(fn.get("arguments")));
                Map<String, Object> copy = new LinkedHashMap<>();
                call.forEach((k, v) -> copy.put(String.valueOf(k), v));
                copy.put("function", f);
                out.add(copy);
            } else {
                out.add(c);
            }
        }
        return out;
    }
}
