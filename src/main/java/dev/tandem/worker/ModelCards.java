package dev.tandem.worker;

import dev.tandem.engine.Engine;
import dev.tandem.engine.tokenizer.TokenizerIdentity;
import dev.tandem.protocol.ModelCard;
import java.util.Map;

/** The model card a worker announces for its engine; computed once per engine (workers of a node share it). */
public final class ModelCards {
    private static final Map<Engine, ModelCard> CARDS =
            java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    private ModelCards() {}

    /** Blocking (hashes the vocabulary the first time): call it where a worker is built, not on an event loop. */
    public static ModelCard of(Engine engine) {
        return CARDS.computeIfAbsent(
                engine,
                e -> new ModelCard(
                        e.info().config().seqLen(),
                        TokenizerIdentity.of(e.tokenizer()),
                        e.chatTemplate().name(),
                        e.chatTemplate().source(),
                        e.chatTemplate().specialTokens()));
    }
}
