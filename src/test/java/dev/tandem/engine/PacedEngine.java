package dev.tandem.engine;

import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * An engine that computes exactly what its delegate computes but takes at least a fixed time per
 * decode step — so tests can act in the middle of a generation that the tiny built-in model would
 * otherwise finish in milliseconds.
 */
public final class PacedEngine implements Engine {
  private final Engine delegate;
  private final long stepMillis;

  public PacedEngine(Engine delegate, long stepMillis) {
    this.delegate = delegate;
    this.stepMillis = stepMillis;
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
  public KvLayout kvLayout() {
    return delegate.kvLayout();
  }

  @Override
  public float[] prefill(KvCache cache, int[] tokens, BooleanSupplier cancelled) {
    return delegate.prefill(cache, tokens, cancelled);
  }

  @Override
  public float[][] decodeStep(List<KvCache> caches, int[] tokens) {
    try {
      Thread.sleep(stepMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return delegate.decodeStep(caches, tokens);
  }
}
