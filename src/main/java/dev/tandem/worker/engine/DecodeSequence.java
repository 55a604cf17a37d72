package dev.tandem.worker.engine;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.StopCondition;
import io.opentelemetry.api.trace.Span;

/**
 * One request in a decode worker's batch: its KV, the token to feed next and how many tokens it has
 * generated. Mutated only between steps, on the worker's event loop.
 */
final class DecodeSequence {
    final long requestId;
    final String routerId;
    /** The router's cluster member, or null when the router did not say. */
    final String routerNode;

    final KvCache cache;
    final SamplingParams sampling;
    final StopCondition stop;
    /** The router's dispatch this sequence belongs to: cancels of other attempts leave it alone. */
    final int attempt;

    int lastToken;
    /** Tokens generated so far, the prefill worker's first token included. */
    int generated;

    boolean cancelled;
    /** Its span on this worker (invalid when the request is not traced), ended when it leaves the batch. */
    Span span = Span.getInvalid();
    /**
     * The token ids of the cache's positions — the prompt, then every token fed to a step — when the
     * prompt's were known (null otherwise): what the sequence's KV may be kept under when it ends.
     */
    private int[] history;

    private int historyLength;

    DecodeSequence(
            long requestId,
            String routerId,
            String routerNode,
            KvCache cache,
            SamplingParams sampling,
            StopCondition stop,
            int firstToken,
            int attempt,
            int[] promptTokens) {
        this.attempt = attempt;
        this.requestId = requestId;
        this.routerId = routerId;
        this.routerNode = routerNode;
        this.cache = cache;
        this.sampling = sampling;
        this.stop = stop;
        this.lastToken = firstToken;
        this.generated = 1;
        if (promptTokens != null && promptTokens.length == cache.length()) {
            this.history = java.util.Arrays.copyOf(promptTokens, promptTokens.length + 16);
            this.historyLength = promptTokens.length;
        }
    }

    /** It leaves the batch (finished, cancelled, or its step failed): its span ends. */
    void left(String how) {
        span.setAttribute("gen_ai.usage.output_tokens", (long) generated)
                .setAttribute("tandem.left", how)
                .end();
    }

    /** A step fed {@code token}: its K/V is now at the next position. */
    void fed(int token) {
        if (history == null) {
            return;
        }
        if (historyLength == history.length) {
            history = java.util.Arrays.copyOf(history, history.length * 2);
        }
        history[historyLength++] = token;
    }

    /** The token ids of the cache's positions, or null when the prompt's were not known. */
    int[] history() {
        return history == null ? null : java.util.Arrays.copyOf(history, historyLength);
    }
}
