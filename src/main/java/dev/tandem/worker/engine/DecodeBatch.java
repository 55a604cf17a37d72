package dev.tandem.worker.engine;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.Sampler;
import dev.tandem.engine.StopCondition;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Continuous batching: every step advances each active sequence by one token; sequences join and
 * leave only between steps. {@link #begin()} and {@link #complete} run on the worker's event loop,
 * {@link #compute} on a compute thread, and a step's sequences are not touched by anyone else while it
 * computes.
 */
final class DecodeBatch {

    /** The sequences one step advances, frozen when the step begins. */
    record Step(List<DecodeSequence> sequences) {}

    /** What a step did to one sequence: the token it produced (or none) and whether it finished. */
    record Outcome(DecodeSequence sequence, int seq, int[] tokens, String finishReason) {}

    /** Where a sequence's KV goes when it ends: kept for reuse, or freed. */
    @FunctionalInterface
    interface Retirement {
        void retire(DecodeSequence sequence);

        Retirement FREE = s -> s.cache.free();
    }

    private final Engine engine;
    private final int maxBatch;
    private final Retirement retirement;
    private final ArrayDeque<DecodeSequence> waiting = new ArrayDeque<>();
    private final Map<Long, DecodeSequence> active = new LinkedHashMap<>();
    private Step running;

    DecodeBatch(Engine engine, int maxBatch) {
        this(engine, maxBatch, Retirement.FREE);
    }

    /** @param retirement takes every sequence that ends with its KV intact (finished or cancelled) */
    DecodeBatch(Engine engine, int maxBatch, Retirement retirement) {
        this.engine = engine;
        this.maxBatch = maxBatch;
        this.retirement = retirement;
    }

    void join(DecodeSequence sequence) {
        waiting.add(sequence);
    }

    /** Cancels a sequence: gone now if idle, or dropped when the step computing it completes. */
    DecodeSequence cancel(long requestId) {
        for (Iterator<DecodeSequence> it = waiting.iterator(); it.hasNext(); ) {
            DecodeSequence s = it.next();
            if (s.requestId == requestId) {
                it.remove();
                s.left("cancelled");
                retirement.retire(s);
                return s;
            }
        }
        DecodeSequence s = active.get(requestId);
        if (s == null || s.cancelled) {
            return null;
        }
        s.cancelled = true;
        if (running == null || !running.sequences.contains(s)) {
            active.remove(requestId);
            s.left("cancelled");
            retirement.retire(s);
        }
        return s;
    }

    /** The requests (active or waiting) of the router on a cluster member. */
    List<Long> requestsOf(String routerNode) {
        List<Long> ids = new java.util.ArrayList<>();
        for (DecodeSequence s : active.values()) {
            if (routerNode.equals(s.routerNode) && !s.cancelled) {
                ids.add(s.requestId);
            }
        }
        for (DecodeSequence s : waiting) {
            if (routerNode.equals(s.routerNode)) {
                ids.add(s.requestId);
            }
        }
        return ids;
    }

    /** The attempt of the request's sequence here (not cancelled), or null when it has none. */
    Integer attemptOf(long requestId) {
        DecodeSequence s = active.get(requestId);
        if (s != null && !s.cancelled) {
            return s.attempt;
        }
        for (DecodeSequence w : waiting) {
            if (w.requestId == requestId) {
                return w.attempt;
            }
        }
        return null;
    }

    boolean stepping() {
        return running != null;
    }

    int activeCount() {
        return active.size();
    }

    int waitingCount() {
        return waiting.size();
    }

    long kvBytes() {
        long bytes = 0;
        for (DecodeSequence s : active.values()) {
            bytes += s.cache.bytes();
        }
        for (DecodeSequence s : waiting) {
            bytes += s.cache.bytes();
        }
        return bytes;
    }

    /** Admits waiting sequences up to the batch limit and freezes the step; null when there is nothing to do. */
    Step begin() {
        if (running != null) {
            throw new IllegalStateException("a step is already running");
        }
        while (active.size() < maxBatch && !waiting.isEmpty()) {
            DecodeSequence s = waiting.poll();
            active.put(s.requestId, s);
        }
        if (active.isEmpty()) {
            return null;
        }
        running = new Step(List.copyOf(active.values()));
        return running;
    }

    /** What a step computed: each sequence's logits and the token sampled from them. */
    record StepResult(float[][] logits, int[] tokens) {}

    /** The math of a step — forward pass and sampling; blocking, for a compute thread. */
    StepResult compute(Step step) {
        List<KvCache> caches = new ArrayList<>(step.sequences.size());
        int[] inputs = new int[step.sequences.size()];
        for (int i = 0; i < inputs.length; i++) {
            DecodeSequence s = step.sequences.get(i);
            caches.add(s.cache);
            inputs[i] = s.lastToken;
        }
        float[][] logits = engine.decodeStep(caches, inputs);
        int[] sampled = new int[logits.length];
        for (int i = 0; i < logits.length; i++) {
            DecodeSequence s = step.sequences.get(i);
            sampled[i] = Sampler.sample(logits[i], s.sampling, s.cache.length());
        }
        return new StepResult(logits, sampled);
    }

    /**
     * Applies each sequence's sampled token and retires finished and cancelled sequences
     * (freeing their KV). Cancelled sequences produce no outcome: nobody waits for them.
     */
    List<Outcome> complete(Step step, StepResult result) {
        if (step != running) {
            throw new IllegalStateException("completing a step that is not running");
        }
        running = null;
        List<Outcome> outcomes = new ArrayList<>(step.sequences.size());
        for (int i = 0; i < result.tokens().length; i++) {
            DecodeSequence s = step.sequences.get(i);
            if (s.cancelled) {
                retire(s);
                continue;
            }
            s.fed(s.lastToken);
            int token = result.tokens()[i];
            int seq = s.generated;
            s.generated++;
            StopCondition.Outcome outcome = s.stop.check(token, s.generated);
            int[] emitted = outcome == StopCondition.Outcome.STOP ? new int[0] : new int[] {token};
            s.lastToken = token;
            if (outcome.finished()) {
                retire(s);
                outcomes.add(new Outcome(s, seq, emitted, outcome.finishReason()));
            } else {
                outcomes.add(new Outcome(s, seq, emitted, null));
            }
        }
        return outcomes;
    }

    /** A step whose compute failed: its sequences cannot continue (their caches are in an unknown state). */
    List<DecodeSequence> abort(Step step) {
        running = null;
        for (DecodeSequence s : step.sequences) {
            active.remove(s.requestId, s);
            s.left("failed");
            s.cache.free();
        }
        return step.sequences.stream().filter(s -> !s.cancelled).toList();
    }

    private void retire(DecodeSequence s) {
        // Only this sequence: a newer attempt of the same request may have joined while it was cancelled.
        active.remove(s.requestId, s);
        s.left(s.cancelled ? "cancelled" : "finished");
        retirement.retire(s);
    }
}
