package dev.tandem.engine.tokenizer;

import java.util.List;
import java.util.Map;

/**
 * A model with several named templates, chosen as HF's apply_chat_template chooses: "tool_use" for
 * a chat with tools when the model has one, else "default" (or the only one).
 */
final class ToolAwareChatTemplate implements ChatTemplate {

    private final ChatTemplate fallback;
    private final ChatTemplate toolUse;

    private ToolAwareChatTemplate(ChatTemplate fallback, ChatTemplate toolUse) {
        this.fallback = fallback;
        this.toolUse = toolUse;
    }

    static ChatTemplate of(Map<String, ChatTemplate> named) {
        ChatTemplate fallback =
                named.getOrDefault("default", named.values().iterator().next());
        ChatTemplate toolUse = named.get("tool_use");
        return toolUse == null || toolUse == fallback ? fallback : new ToolAwareChatTemplate(fallback, toolUse);
    }

    @Override
    public String name() {
        return fallback.name();
    }

    @Override
    public String render(List<ChatMessage> messages) {
        return fallback.render(messages);
    }

    @Override
    public String render(ChatPrompt prompt) {
        boolean tools = prompt.tools() != null && !prompt.tools().isEmpty();
        return (tools ? toolUse : fallback).render(prompt);
    }

    /** The default template's source: a model card carries that one (not the tool_use one). */
    @Override
    public String source() {
        return fallback.source();
    }

    @Override
    public java.util.Map<String, String> specialTokens() {
        return fallback.specialTokens();
    }

    /** The template that serves chats without tools. */
    ChatTemplate fallback() {
        return fallback;
    }
}
