package dev.tandem.engine;

import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.Tokenizer;
import java.util.List;
import java.util.function.BooleanSupplier;

/** An engine that hands every call to another: the base for wrappers that change one aspect (timing, faults). */
public abstract class ForwardingEngine implements Engine {
    protected final Engine delegate;

    protected ForwardingEngine(Engine delegate) {
        this.delegate = delegate;
    }

    @Override
    public ModelInfo info() {
        return delegate.info();
    }

    @Override
    public Tokenizer tokenizer() {
        return delegate.tokenizer();
    }

    @Override
    public ChatTemplate chatTemplate() {
        return delegate.chatTemplate();
    }

    @Override
    public long residentBytes() {
        return delegate.residentBytes();
    }

    @Override
    public KvLayout kvLayout() {
        return delegate.kvLayout();
    }

    @Override
    public KvCache newCache() {
        return delegate.newCache();
    }

    @Override
    public float[] prefill(KvCache cache, int[] tokens, BooleanSupplier cancelled) {
        return delegate.prefill(cache, tokens, cancelled);
    }

    @Override
    public float[][] decodeStep(List<KvCache> caches, int[] tokens) {
        return delegate.decodeStep(caches, tokens);
    }

    @Override
    public long transferNanos(long bytes) {
        return delegate.transferNanos(bytes);
    }
}
