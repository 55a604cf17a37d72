package dev.tandem.engine;

import dev.tandem.engine.tokenizer.ChatTemplate;
import java.util.Objects;

/** An engine whose model brings its own chat template (from its tokenizer's directory). */
public final class OwnChatTemplateEngine extends ForwardingEngine {
    private final ChatTemplate chatTemplate;

    public OwnChatTemplateEngine(Engine delegate, ChatTemplate chatTemplate) {
        super(delegate);
        this.chatTemplate = Objects.requireNonNull(chatTemplate, "chatTemplate");
    }

    @Override
    public ChatTemplate chatTemplate() {
        return chatTemplate;
    }
}
