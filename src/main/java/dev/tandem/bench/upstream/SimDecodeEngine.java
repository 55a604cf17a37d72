package dev.tandem.bench.upstream;

import dev.tandem.engine.Pacing;
import dev.tandem.engine.sim.SimEngine;
import dev.tandem.engine.sim.SimProfile;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The decode side of a sim vLLM instance: continuous batching — every step advances each running
 * sequence by one token, for the time the profile gives a step of that batch over its context (the sim
 * engine's own cost) — with at most {@code maxBatch} running and the rest waiting, in order.
 */
final class SimDecodeEngine implements AutoCloseable {
    /** Where a sequence's tokens go; called on the decode thread. */
    interface Sink {
        /** One token; {@code last} when the sequence reached its limit. */
        void token(int token, boolean last);

        /** True once the client went away: the sequence leaves the batch. */
        boolean cancelled();
    }

    private static final class Sequence {
        final Sink sink;
        final int maxTokens;
        long context;
        int generated;
        int previous;

        Sequence(Sink sink, int promptTokens, int lastPromptToken, int maxTokens) {
            this.sink = sink;
            this.context = promptTokens;
            this.previous = lastPromptToken;
            this.maxTokens = maxTokens;
        }
    }

    private final SimProfile profile;
    private final double timeScale;
    private final int maxBatch;
    private final ArrayDeque<Sequence> waitingQueue = new ArrayDeque<>();
    private final List<Sequence> batch = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile int runningCount;
    private volatile int waitingCount;
    private volatile long contextTokens;

    SimDecodeEngine(String name, SimProfile profile, double timeScale, int maxBatch) {
        this.profile = profile;
        this.timeScale = timeScale;
        this.maxBatch = maxBatch;
        this.thread = new Thread(this::run, "sim-vllm-decode-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /** A sequence whose KV arrived: it joins the batch at the next step (or waits for room). */
    synchronized void add(Sink sink, int promptTokens, int lastPromptToken, int maxTokens) {
        waitingQueue.add(new Sequence(sink, promptTokens, lastPromptToken, maxTokens));
        waitingCount = waitingQueue.size();
        notifyAll();
    }

    int running() {
        return runningCount;
    }

    int waiting() {
        return waitingCount;
    }

    /** KV held by running sequences, in tokens. */
    long contextTokens() {
        return contextTokens;
    }

    private void run() {
        while (running) {
            try {
                admit();
            } catch (InterruptedException e) {
                return;
            }
            long context = 0;
            for (Sequence s : batch) {
                context += s.context + 1;
            }
            contextTokens = context;
            try {
                Pacing.waitUntil(
                        System.nanoTime() + (long) (profile.decodeStepNanos(batch.size(), context) / timeScale),
                        () -> !running);
            } catch (java.util.concurrent.CancellationException e) {
                return;
            }
            step();
        }
    }

    /** Moves waiting sequences into the batch; blocks while there is nothing to run. */
    private synchronized void admit() throws InterruptedException {
        batch.removeIf(s -> s.sink.cancelled());
        while (running && batch.isEmpty() && waitingQueue.isEmpty()) {
            wait(100);
        }
        while (batch.size() < maxBatch && !waitingQueue.isEmpty()) {
            batch.add(waitingQueue.poll());
        }
        runningCount = batch.size();
        waitingCount = waitingQueue.size();
    }

    private void step() {
        for (int i = batch.size() - 1; i >= 0; i--) {
            Sequence s = batch.get(i);
            if (s.sink.cancelled()) {
                batch.remove(i);
                continue;
            }
            int token = SimEngine.nextToken(s.previous, (int) s.context);
            s.previous = token;
            s.context++;
            s.generated++;
            boolean last = s.generated >= s.maxTokens;
            s.sink.token(token, last);
            if (last) {
                batch.remove(i);
            }
        }
    }

    @Override
    public void close() {
        running = false;
        synchronized (this) {
            notifyAll();
        }
        try {
            thread.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
