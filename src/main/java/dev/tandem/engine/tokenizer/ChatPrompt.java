package dev.tandem.engine.tokenizer;

import java.util.List;
import java.util.Map;

/**
 * Everything a chat template sees, as an OpenAI chat request gives it and HF's apply_chat_template
 * takes it.
 *
 * @param tools the request's {@code tools} (OpenAI function schemas), or null for none
 * @param addGenerationPrompt open the assistant's turn at the end (OpenAI's behaviour; default true)
 * @param continueFinalMessage the last message is an unfinished assistant turn the model continues
 * @param kwargs {@code chat_template_kwargs}: extra template variables (e.g. enable_thinking)
 */
public record ChatPrompt(
        List<ChatMessage> messages,
        List<Object> tools,
        boolean addGenerationPrompt,
        boolean continueFinalMessage,
        Map<String, Object> kwargs) {

    public ChatPrompt {
        messages = List.copyOf(messages);
        kwargs = kwargs == null ? Map.of() : kwargs;
    }

    public static ChatPrompt of(List<ChatMessage> messages) {
        return new ChatPrompt(messages, null, true, false, Map.of());
    }
}
