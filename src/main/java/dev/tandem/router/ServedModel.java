package dev.tandem.router;

import dev.tandem.engine.ModelInfo;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.protocol.WorkerDescriptor;
import java.util.Objects;

/**
 * A model a router takes requests for: its name, the fingerprint of the weights its workers must have
 * (KV moves only between those), the context window requests must fit, and what the router tokenizes
 * and renders chats with.
 */
public record ServedModel(
        String name, long fingerprint, int contextLength, Tokenizer tokenizer, ChatTemplate chatTemplate) {

    public ServedModel {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(tokenizer, "tokenizer");
        Objects.requireNonNull(chatTemplate, "chatTemplate");
        if (contextLength <= 0) {
            throw new IllegalArgumentException("context length must be positive, got " + contextLength);
        }
    }

    /** The model an engine runs, as a router loaded with it serves it. */
    public static ServedModel of(ModelInfo info, Tokenizer tokenizer, ChatTemplate chatTemplate) {
        return new ServedModel(info.name(), info.fingerprint(), info.config().seqLen(), tokenizer, chatTemplate);
    }

    public int vocabSize() {
        return tokenizer.vocabSize();
    }

    /** True for a worker of this model: same name and same weights. */
    public boolean servedBy(WorkerDescriptor worker) {
        return worker.model().equals(name) && worker.modelFingerprint() == fingerprint;
    }
}
