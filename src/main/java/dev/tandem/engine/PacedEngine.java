package dev.tandem.engine;

import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * An engine that computes exactly what its delegate computes but takes at least as long as an
 * accelerator would: a floor per decode step and per prompt token. The tiny built-in model finishes a
 * generation in milliseconds; paced, it behaves like a served model for load tests, failure drills
 * (killing a worker mid-stream) and capacity planning — and its tokens stay exact.
 */
public final class PacedEngine extends ForwardingEngine {
    private final long decodeStepMicros;
    private final long prefillMicrosPerToken;

    public PacedEngine(Engine delegate, long decodeStepMillis) {
        this(delegate, decodeStepMillis * 1000, 0);
    }

    public PacedEngine(Engine delegate, long decodeStepMicros, long prefillMicrosPerToken) {
        super(delegate);
        this.decodeStepMicros = decodeStepMicros;
        this.prefillMicrosPerToken = prefillMicrosPerToken;
    }

    @Override
    public float[] prefill(KvCache cache, int[] tokens, BooleanSupplier cancelled) {
        long until = System.nanoTime() + prefillMicrosPerToken * 1000 * tokens.length;
        float[] logits = delegate.prefill(cache, tokens, cancelled);
        Pacing.waitUntil(until, cancelled);
        return logits;
    }

    @Override
    public float[][] decodeStep(List<KvCache> caches, int[] tokens) {
        long until = System.nanoTime() + decodeStepMicros * 1000;
        float[][] logits = delegate.decodeStep(caches, tokens);
        Pacing.waitUntil(until, () -> false);
        return logits;
    }
}
