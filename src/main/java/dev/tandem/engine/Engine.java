package dev.tandem.engine;

import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.Tokenizer;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The seam between routing and math. Calls block the calling thread for as long as the compute
 * takes: workers call them from their own worker threads, never from an event loop.
 *
 * <p>Implementations must be safe to call from several threads at once on different caches (the
 * weights are shared and read-only).
 */
public interface Engine {

    ModelInfo info();

    Tokenizer tokenizer();

    /** How chat messages become this model's prompt. */
    default ChatTemplate chatTemplate() {
        return ChatTemplate.ROLE_TAGS;
    }

    /** Heap this engine keeps for its whole life (its weights): the node's memory budget is what is left. */
    default long residentBytes() {
        return 0;
    }

    /** KV block size in tokens this engine was built with. */
    KvLayout kvLayout();

    /** An empty cache with this engine's layout. */
    default KvCache newCache() {
        return new KvCache(kvLayout());
    }

    /**
     * Feeds {@code tokens} at positions {@code cache.length()} onwards, storing their K/V in the
     * cache, and returns the logits after the last one.
     *
     * @param cancelled checked often (the reference engine: between layers and chunks of positions);
     *                  when it turns true the call throws {@link java.util.concurrent.CancellationException}
     *                  and the cache is left partial
     * @throws IllegalArgumentException for no tokens, a token outside the vocabulary, positions past the
     *                                  context, or a cache of another layout
     */
    float[] prefill(KvCache cache, int[] tokens, BooleanSupplier cancelled);

    /**
     * One decode step for a batch: sequence i takes {@code tokens[i]} at position
     * {@code caches.get(i).length()}. Returns the logits of every sequence, in order. The logits of a
     * sequence are bit-identical to feeding it alone: batching never changes the math. An empty batch
     * returns an empty array; one cache twice in a batch is an {@link IllegalArgumentException}.
     */
    float[][] decodeStep(List<KvCache> caches, int[] tokens);

    /**
     * How long moving {@code bytes} of this engine's KV to another worker takes on the interconnect it
     * models, on top of sending them: 0 for engines whose real transfer is the cost; a simulated engine
     * charges its modelled bytes at its modelled bandwidth.
     */
    default long transferNanos(long bytes) {
        return 0;
    }

    /**
     * Prompt tokens per second of prefill compute this engine expects before it has measured any (0: no
     * idea): the prior of the rate a worker reports ({@link dev.tandem.protocol.WorkerLoad#prefillTokensPerSecond()}),
     * so that routers can predict times from a worker's first request on.
     */
    default double expectedPrefillTokensPerSecond() {
        return 0;
    }
}
