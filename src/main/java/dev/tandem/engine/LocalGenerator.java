package dev.tandem.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Generation in one process, token by token: the ground truth a disaggregated run must reproduce,
 * and the engine path of benchmarks that need no cluster.
 */
public final class LocalGenerator {

    /** The generated tokens (stop tokens excluded) and why generation ended. */
    public record Result(int[] tokens, String finishReason) {}

    /** Logits seen at each generated position, for exactness tests. */
    public interface LogitsObserver {
        void observe(int generatedIndex, float[] logits);
    }

    private final Engine engine;

    public LocalGenerator(Engine engine) {
        this.engine = engine;
    }

    public Result generate(int[] prompt, SamplingParams sampling, int maxNewTokens, int[] stopTokens) {
        return generate(prompt, sampling, maxNewTokens, stopTokens, (i, l) -> {});
    }

    public Result generate(
            int[] prompt, SamplingParams sampling, int maxNewTokens, int[] stopTokens, LogitsObserver observer) {
        BooleanSupplier never = () -> false;
        StopCondition stop = new StopCondition(
                engine.tokenizer(),
                stopTokens,
                maxNewTokens,
                prompt.length,
                engine.info().config().seqLen());
        KvCache cache = engine.newCache();
        float[] logits = engine.prefill(cache, prompt, never);
        List<Integer> out = new ArrayList<>();
        int generated = 0;
        while (true) {
            observer.observe(generated, logits);
            int position = cache.length();
            int token = Sampler.sample(logits, sampling, position);
            generated++;
            StopCondition.Outcome outcome = stop.check(token, generated);
            if (outcome != StopCondition.Outcome.STOP) {
                out.add(token);
            }
            if (outcome.finished()) {
                return new Result(out.stream().mapToInt(Integer::intValue).toArray(), outcome.finishReason());
            }
            logits = engine.decodeStep(List.of(cache), new int[] {token})[0];
        }
    }
}
