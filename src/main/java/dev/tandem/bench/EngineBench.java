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
 * prompts of a few tokens, greedy. Prefill is not timed. Warm-up rounds let the JIT compile first (one
 * stream only reached its steady speed on the second round of 200 tokens), and each figure is the
 * median of a few runs: on this shared 2-core machine two runs of the same code differ by up to 30%.
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
    private final int repeats;

    /**
     * @param tokensPerStream decode steps per stream (bounded by the context left after the prompt)
     * @param repeats runs per figure, of which the median is reported
     */
    public EngineBench(Engine engine, int tokensPerStream, int repeats) {
        this.engine = engine;
        this.tokensPerStream = tokensPerStream;
        this.repeats = repeats;
    }

    public Result run(List<Integer> batchSizes, PrintStream out) {
        // Warm-up: the JIT compiles the one-stream product and each batch size's kernels (a batch of 8 or
        // more takes the eight-sequence strips, which a warm-up of 4 left cold: batch 16's runs read 602,
        // 921, 1,573 tokens/s, the last one compiled) before anything is timed.
        decodeRate(1);
        decodeRate(1);
        for (int size : batchSizes) {
            decodeRate(size);
        }
        double single = median(1, "1 stream", out);
        Map<Integer, Double> batches = new TreeMap<>();
        for (int size : batchSizes) {
            batches.put(size, median(size, String.format("batch of %-4d", size), out));
        }
        return new Result(engine.info().name(), single, batches);
    }

    private double median(int streams, String label, PrintStream out) {
        double[] runs = new double[repeats];
        StringBuilder each = new StringBuilder();
        for (int r = 0; r < repeats; r++) {
            runs[r] = decodeRate(streams);
            each.append(each.length() == 0 ? "" : ", ").append(String.format("%.1f", runs[r]));
        }
        double median = new Percentiles(runs).at(50); // nearest rank, as the other benches' p50
        out.printf("  %-17s %10.1f tokens/s%s%n", label, median, repeats > 1 ? "   (runs: " + each + ")" : "");
        return median;
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
