package dev.tandem.router;

import dev.tandem.cluster.SessionAffinity;
import dev.tandem.engine.StopCondition;
import dev.tandem.metrics.RouterMetrics;
import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.TokenEvent;
import io.opentelemetry.api.trace.Span;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Drives requests through their {@link RequestState}s: a dispatch to a pair ({@code PREFILLING}), the
 * first token and DECODE_REQUEST ({@code DECODING}), a move when a worker fails, stalls or leaves
 * ({@code MOVING}, then a new dispatch that avoids it), and the single end — done, error, cancel,
 * timeout — after which nothing is held. Loads follow the state ({@link #enter}), so every path
 * releases exactly what it took.
 *
 * <p>Before the first token a failed dispatch is simply tried again; after it, the prompt plus every
 * token already sent is re-prefilled on another pair and the stream continues at the next sequence
 * number — with a fixed seed the output is the one an undisturbed run gives. Runs on the router's loop.
 */
final class RequestLifecycle {
    private static final Logger LOG = Logger.getLogger(RequestLifecycle.class.getName());

    private final RouterLoop loop;
    private final Dispatcher workers;
    private final ModelSchedulers pairs;
    private final LoadTracker loads;
    private final AffinityRecords affinity;
    private final Admission admission;
    private final RouterMetrics metrics;
    private final RouterIdentity identity;
    private final FlowControl flow;
    /** Requests with an id and not yet ended, by id: what token batches and worker departures are matched against. */
    private final Map<Long, ActiveRequest> active = new HashMap<>();

    RequestLifecycle(
            RouterLoop loop,
            Dispatcher workers,
            ModelSchedulers pairs,
            LoadTracker loads,
            SessionAffinity affinity,
            Admission admission,
            RouterMetrics metrics,
            RouterIdentity identity,
            FlowControl flow) {
        this.loop = loop;
        this.workers = workers;
        this.pairs = pairs;
        this.loads = loads;
        this.affinity = new AffinityRecords(affinity, loop);
        this.admission = admission;
        this.metrics = metrics;
        this.identity = identity;
        this.flow = flow;
        flow.lifecycle(this);
    }

    /** The request got its id: token batches and departures find it from now on. */
    void track(ActiveRequest a) {
        active.put(a.id, a);
    }

    ActiveRequest get(long requestId) {
        return active.get(requestId);
    }

    Collection<ActiveRequest> active() {
        return List.copyOf(active.values());
    }

    /**
     * Runs a step of a request's life; a bug that throws ends the request with a 500 instead of leaving
     * it hanging with its load and timers held.
     */
    void guarded(ActiveRequest a, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            LOG.log(Level.SEVERE, "request " + a.id + " failed inside the router", e);
            end(a, new GenerationFailure(500, "server_error", "internal_error", "internal error: " + e), null);
        }
    }

    /** Picks a pair (avoiding the workers that failed this request) and sends PREFILL_REQUEST. */
    void dispatch(ActiveRequest a) {
        if (a.ended()) {
            return;
        }
        int attempt = ++a.attempt;
        if (attempt > RetryPolicy.MAX_ATTEMPTS) {
            end(a, RetryPolicy.outOfAttempts(a.failedWorkers, a.onlyRefusedForCapacity()), null);
            return;
        }
        int[] prompt = a.resumePrompt();
        a.trace.scheduling(attempt);
        PairScheduler.Choice choice =
                pairs.choose(a.request.model(), a.request.sessionKey(), a.affinityWorker, prompt, a.avoiding());
        if (choice.missingRole() != null) {
            end(a, RetryPolicy.outOfWorkers(choice.missingRole(), a.onlyRefusedForCapacity()), null);
            return;
        }
        if (attempt == 1) {
            metrics.queued(loop.nanoTime() - a.startNanos);
            if (a.request.sessionKey() != null) {
                metrics.affinity(choice.decodeWorker().equals(a.affinityWorker));
            }
        } else {
            metrics.retry(a.stream.delivered() > 0);
        }
        a.prefillWorker = choice.prefillWorker();
        a.decodeWorker = choice.decodeWorker();
        a.seqOffset = a.stream.delivered();
        a.local = choice.local();
        // What the prefill worker has to compute, as far as the index knows: its queue counts it at once.
        a.prefillTokens = Math.max(1, prompt.length - choice.prefillCachedBlocks() * choice.blockSize());
        metrics.dispatched(choice.local());
        enter(a, RequestState.PREFILLING);
        LOG.fine(() -> "request " + a.id + " attempt " + attempt + ": prefill " + a.prefillWorker + ", decode "
                + a.decodeWorker + ", " + prompt.length + " tokens");
        if (attempt == 1) {
            a.sink.onAccepted(a.id, a.prefillWorker, a.decodeWorker);
        }
        PrefillRequest request = new PrefillRequest(
                a.id,
                prompt,
                a.decodeWorker,
                a.request.sampling(),
                identity.nodeId(),
                attempt,
                choice.decodeCachedBlocks(),
                identity.routerId());
        Span span = a.trace.prefilling(a.prefillWorker, a.decodeWorker, a.local, prompt.length - a.prefillTokens);
        workers.prefill(a.prefillWorker, request, span).onComplete(ar -> {
            if (attempt != a.attempt || a.state() != RequestState.PREFILLING) {
                return; // it ended, moves, or a newer dispatch owns it
            }
            guarded(a, () -> {
                if (ar.succeeded()) {
                    onPrefillDone(a, ar.result());
                } else {
                    onPrefillFailed(a, ar.cause());
                }
            });
        });
    }

    private void onPrefillFailed(ActiveRequest a, Throwable cause) {
        RetryPolicy.Decision decision = RetryPolicy.afterPrefill(cause, a.prefillWorker, a.decodeWorker);
        if (!decision.retries()) {
            end(a, decision.failure(), null);
            return;
        }
        LOG.info(() -> "request " + a.id + ": prefill on " + a.prefillWorker + " failed, retrying: " + cause);
        if (decision.forCapacity()) {
            a.refusedForCapacity.addAll(decision.avoid());
        }
        moveAway(a, decision.avoid(), false);
    }

    /**
     * The prefill worker's first token, while its KV is still on the way: it goes out now. Should the KV
     * then fail to arrive, the retry re-prefills prompt + this token elsewhere, as after any output.
     */
    void onFirstToken(ActiveRequest a, int first) {
        guarded(a, () -> {
            loads.computed(a);
            if (!a.firstTokenAhead()) {
                emitFirst(a, first, true);
            }
        });
    }

    /** The KV is on the decode worker: the first token goes out (unless it went ahead), and the decode worker takes over. */
    private void onPrefillDone(ActiveRequest a, PrefillDone done) {
        LOG.fine(() -> "request " + a.id + " prefilled: " + done);
        a.kvLanded = true;
        int first = done.firstToken();
        int index = a.seqOffset;
        if (index == 0) {
            // What the client is told was reused: the prefill of its own prompt (a failover's re-prefill
            // of prompt + output does not count).
            a.cachedTokens = Math.min(done.cachedTokens(), a.request.promptTokens().length);
            metrics.promptTokens(a.cachedTokens, a.request.promptTokens().length - a.cachedTokens);
        }
        a.kvBytes += done.kvBytes();
        metrics.kvMoved(done.kvBytes());
        a.trace.prefilled(done.cachedTokens(), done.kvBytes());
        // NO_FIRST_TOKEN: a GPU server behind the decode worker makes the first token, so nothing goes out here.
        if (first != PrefillDone.NO_FIRST_TOKEN && !a.firstTokenAhead() && !emitFirst(a, first, false)) {
            return;
        }
        enter(a, RequestState.DECODING);
        flow.prefilled(a, done); // its prefill worker has room again
        a.lastProgressNanos = loop.nanoTime();
        startDecode(a, first, a.request.maxTokens() - index);
    }

    /**
     * Streams the attempt's first token (at the request's next sequence number); false when it ended the
     * request. {@code kvMoving}: the KV is still on its way, so the prefill worker is told to drop it too.
     */
    private boolean emitFirst(ActiveRequest a, int first, boolean kvMoving) {
        int index = a.seqOffset;
        StopCondition.Outcome outcome = a.firstTokenStop.check(first, index + 1);
        int[] tokens = outcome == StopCondition.Outcome.STOP ? new int[0] : new int[] {first};
        if (outcome.finished()) {
            // Done at this token: the KV on (or on its way to) the decode worker is not needed; free it now.
            if (kvMoving) {
                workers.cancelPrefill(a.prefillWorker, new CancelRequest(a.id, "finished_at_first_token", a.attempt));
            }
            workers.cancelDecode(a.decodeWorker, new CancelRequest(a.id, "finished_at_first_token"));
            deliver(a, new TokenEvent(a.id, index, tokens, outcome.finishReason(), null));
            return false;
        }
        deliver(a, new TokenEvent(a.id, index, tokens, null, null));
        return !a.ended(); // a stop string in the first token ended it
    }

    private void startDecode(ActiveRequest a, int first, int maxNewTokens) {
        int attempt = a.attempt;
        String decodeWorker = a.decodeWorker;
        DecodeRequest decode = new DecodeRequest(
                a.id,
                first,
                maxNewTokens,
                a.request.sampling(),
                a.request.stopTokens(),
                identity.routerId(),
                identity.nodeId(),
                attempt);
        workers.startDecode(decodeWorker, decode, a.trace.decoding(decodeWorker))
                .onComplete(ar -> {
                    if (ar.succeeded() || attempt != a.attempt || a.state() != RequestState.DECODING) {
                        return;
                    }
                    guarded(a, () -> {
                        RetryPolicy.Decision decision = RetryPolicy.afterDecodeStart(ar.cause(), decodeWorker);
                        if (decision.retries()) {
                            LOG.info(() ->
                                    "request " + a.id + ": decode start on " + decodeWorker + " failed: " + ar.cause());
                            move(a, decision.avoid());
                        } else {
                            end(a, decision.failure(), null);
                        }
                    });
                });
    }

    /** An event from the request's current decode worker (the caller checked it is that one, and decoding). */
    void onDecodeEvent(ActiveRequest a, TokenEvent e) {
        guarded(a, () -> {
            if (e.error() != null) {
                LOG.info(() -> "request " + a.id + ": decode worker " + a.decodeWorker + " failed: " + e.error());
                move(a, List.of(a.decodeWorker));
                return;
            }
            a.lastProgressNanos = loop.nanoTime();
            deliver(a, new TokenEvent(e.requestId(), e.seq() + a.seqOffset, e.tokens(), e.finishReason(), null));
        });
    }

    /**
     * Gives up the current workers — a worker failed, stalled or left — and dispatches again without
     * {@code failed}. Only from {@code PREFILLING} or {@code DECODING}.
     */
    void move(ActiveRequest a, List<String> failed) {
        moveAway(a, failed, a.state() == RequestState.PREFILLING);
    }

    /** @param prefillOutstanding the prefill worker has not answered: it is told to stop, and avoided */
    private void moveAway(ActiveRequest a, List<String> failed, boolean prefillOutstanding) {
        a.failedWorkers.addAll(failed);
        a.failedOver |= a.stream.delivered() > 0;
        String decodeWorker = a.decodeWorker;
        a.trace.moving("moved away from " + failed);
        enter(a, RequestState.MOVING);
        // Only the attempt being left: should it arrive late, the next attempt on the same worker is untouched.
        CancelRequest cancel = new CancelRequest(a.id, "moved", a.attempt);
        if (prefillOutstanding) {
            // A cancel could overtake a new prefill on the same worker: do not go back there.
            a.failedWorkers.add(a.prefillWorker);
            workers.cancelPrefill(a.prefillWorker, cancel);
        }
        a.decodeWorker = null;
        int attempt = a.attempt;
        // The next pair may have the same decode worker, and a cancel that overtook the new KV or decode start
        // would kill the new attempt: dispatch once the old one is gone there (or it did not answer).
        workers.cancelDecodeConfirmed(decodeWorker, cancel).onComplete(v -> {
            if (a.state() == RequestState.MOVING && attempt == a.attempt) {
                guarded(a, () -> dispatch(a));
            }
        });
    }

    private void deliver(ActiveRequest a, TokenEvent event) {
        if (event.tokens().length > 0) {
            long now = loop.nanoTime();
            if (a.firstTokenNanos == 0) {
                a.firstTokenNanos = now;
                metrics.firstToken(now - a.startNanos);
                a.trace.firstToken();
            } else {
                metrics.interToken(now - a.lastTokenNanos);
            }
            a.lastTokenNanos = now;
            flow.served(a, event.tokens().length);
        }
        if (a.stream.accept(event)) {
            end(a, a.stream.error() != null ? GenerationFailure.upstream(a.stream.error()) : null, null);
        }
    }

    /**
     * The single exit of a request: exactly once, whatever ended it. {@code failure} null and
     * {@code cancelReason} null means it finished normally.
     */
    void end(ActiveRequest a, GenerationFailure failure, String cancelReason) {
        if (a.ended()) {
            return;
        }
        enter(a, RequestState.ENDED);
        if (a.holdsAdmission) {
            admission.release();
            a.holdsAdmission = false;
        }
        flow.ended(a);
        long now = loop.nanoTime();
        RouterMetrics.Outcome outcome = RequestOutcomes.of(a.failedOver, failure, cancelReason);
        a.trace.ending(outcome.label(), a.stream.delivered());
        RequestLog.ended(a, failure, cancelReason, now);
        metrics.ended(outcome, a.request.promptTokens().length, a.stream.delivered(), now - a.startNanos);
        if (a.timerId >= 0) {
            loop.cancelTimer(a.timerId);
        }
        if (a.id >= 0) {
            active.remove(a.id);
        }
        boolean ok = failure == null && cancelReason == null;
        if (!ok && a.id >= 0) {
            tellWorkers(a, cancelReason != null ? cancelReason : failure.code());
        } else if (a.stream.stoppedByString()) {
            // The decode worker does not know about stop strings; it would generate on for nobody.
            tellWorkers(a, "stop_string");
        }
        if (ok) {
            // Recorded before the response ends, so the session's next request already finds it.
            affinity.record(a).onComplete(v -> {
                String tail = a.stream.flushText();
                if (!tail.isEmpty()) {
                    a.sink.onTokens(new int[0], tail);
                }
                a.sink.onFinish(
                        a.stream.finishReason(),
                        new Usage(a.request.promptTokens().length, a.stream.delivered(), a.cachedTokens));
                a.trace.ended(null);
            });
        } else {
            if (failure != null) {
                a.sink.onError(failure);
            }
            a.trace.ended(failure != null ? failure.code() : null);
        }
    }

    /** A worker left: the sessions pinned to it are forgotten (by every router that notices; twice is harmless). */
    void forgetWorker(String workerId) {
        affinity.forgetWorker(workerId);
    }

    /** Moves the request to {@code next}, taking and giving back worker loads as the two states hold them. */
    private void enter(ActiveRequest a, RequestState next) {
        loads.follow(a, a.moveTo(next), next);
    }

    private void tellWorkers(ActiveRequest a, String reason) {
        CancelRequest cancel = new CancelRequest(a.id, reason);
        if (a.prefillWorker != null) {
            workers.cancelPrefill(a.prefillWorker, cancel);
        }
        if (a.decodeWorker != null) {
            workers.cancelDecode(a.decodeWorker, cancel);
        }
    }
}
