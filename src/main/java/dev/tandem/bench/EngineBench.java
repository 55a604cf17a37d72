package dev.tandem.bench;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.Sampler;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reference engine's decode speed, as {@code tandem bench engine} reports it: one stream, then
 * batches of several streams decoded together (one {@link Engine#decodeStep} per token of each), on
 * prompts of a few tokens, greedy. Prefill is not timed; a warm-up round lets the JIT compile first.
 */
public final class EngineBench {

    /** Tokens per second of one stream, and of each batch size. */
    public record Result(String model, double singleTokensPerSecond, Map<Integer, Double> batchTokensPerSecond) {

        /** {@code {"model", "single_tokens_per_s", "batch_tokens_per_s": {"4": x, …}}}: other tools read it. */
        public JsonObject summary() {
            JsonObject batches = new JsonObject();
            batchTokensPerSecond.forEach((size, rate) -> batches.put(Integer.toString(size), round(rate)));
            return new JsonObject()
                    .put("model", model)
                    .put("single_tokens_per_s", round(singleTokensPerSecond))
                    .put("batch_tokens_per_s", batches);
        }

        private static double round(double x) {
            return Math.round(x * 10) / 10.0;
        }
    }

    private final Engine engine;
    private final int tokensPerStream;

    /** @param tokensPerStream decode steps per stream (bounded by the context left after the prompt) */
    public EngineBench(Engine engine, int tokensPerStream) {
        this.engine = engine;
        this.tokensPerStream = tokensPerStream;
    }

    public Result run(List<Integer> batchSizes, PrintStream out) {
        decodeRate(1); // warm-up: the JIT compiles the math before anything is timed
        double single = decodeRate(1);
        out.printf("  1 stream          %10.1f tokens/s%n", single);
        Map<Integer, Double> batches = new TreeMap<>();
        for (int size : batchSizes) {
            double rate = decodeRate(size);
            batches.put(size, rate);
            out.printf("  batch of %-4d     %10.1f tokens/s%n", size, rate);
        }
        return new Result(engine.info().name(), single, batches);
    }

    /** Tokens per second of {@code streams} sequences decoded in lockstep. */
    double decodeRate(int streams) {
        List<KvCache> caches = new ArrayList<>();
        int[] next = new int[streams];
        int promptLength = 0;
        for (int s = 0; s < streams; s++) {
            int[] prompt = engine.tokenizer().encode("Once upon a time, story " + s, true);
            promptLength = Math.max(promptLength, prompt.length);
            KvCache cache = engine.newCache();
            next[s] = Sampler.argmax(engine.prefill(cache, prompt, () -> false));
            caches.add(cache);
        }
        int steps = Math.min(tokensPerStream, engine.info().config().seqLen() - promptLength - 1);
        if (steps < 1) {
            throw new IllegalArgumentException("the model's context leaves no room to decode");
        }
        long start = System.nanoTime();
        for (int step = 0; step < steps; step++) {
            float[][] logits = engine.decodeStep(caches, next);
            for (int s = 0; s < streams; s++) {
                next[s] = Sampler.argmax(logits[s]);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return (double) steps * streams / seconds;
    }
}
