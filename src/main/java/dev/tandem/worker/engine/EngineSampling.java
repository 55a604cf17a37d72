package dev.tandem.worker.engine;

import dev.tandem.engine.SamplingParams;
import dev.tandem.protocol.Sampling;

/** The wire's sampling settings as the engine's sampler takes them (both validate the same ranges). */
public final class EngineSampling {
    private EngineSampling() {}

    public static SamplingParams of(Sampling s) {
        return new SamplingParams(s.temperature(), s.topP(), s.topK(), s.seed());
    }
}
