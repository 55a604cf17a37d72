package dev.tandem.engine.tokenizer;

/**
 * A chat template refused the conversation (its {@code raise_exception}, e.g. "Conversation roles
 * must alternate") or failed on it: the request is at fault, so callers answer 400.
 */
public final class ChatTemplateException extends RuntimeException {

    public ChatTemplateException(String message) {
        super(message);
    }

    public ChatTemplateException(String message, Throwable cause) {
        super(message, cause);
    }
}
