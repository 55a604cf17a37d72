package dev.tandem.router;

import dev.tandem.cluster.QuotaDecision;
import dev.tandem.cluster.TenantQuotas;
import dev.tandem.config.FlowControlSettings;
import dev.tandem.config.TenantSettings;
import dev.tandem.metrics.FlowMetrics;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.router.flow.FairQueue;
import dev.tandem.router.flow.Saturation;
import dev.tandem.router.scaling.TokenWindow;
import io.vertx.core.Future;
import java.util.HashMap;
import java.util.Map;

/**
 * Flow control between admission and scheduling: the tenant's cluster-wide quota ({@link TenantQuotas}),
 * then, per model, dispatch at once while its pools have room ({@link Saturation}) or wait in a
 * {@link FairQueue} — priority bands, then the tenant served least — until a worker frees up, the request's
 * deadline passes (429 {@code queue_timeout}) or its TTFT target can no longer be met (429
 * {@code slo_unattainable}). A waiting request that is cancelled leaves the queue at once. The queue is
 * drained when a request ends or leaves prefill, and every {@link #POLL_MS} ms while anyone waits (the
 * workers' reports and the other replicas' loads change without telling). Loop only.
 */
final class FlowControl {
    /** How often a non-empty queue looks again for room it was not told of. */
    static final long POLL_MS = 5;

    private final RouterLoop loop;
    private final ModelSchedulers pairs;
    private final FlowControlSettings settings;
    private final Saturation saturation;
    private final TenantQuotas quotas;
    private final FlowMetrics metrics;
    private final Admission admission;
    private final TokenWindow tokens;
    private final Map<ServedModel, FairQueue<ActiveRequest>> queues = new HashMap<>();
    private RequestLifecycle lifecycle;
    private boolean drainScheduled;
    private long pollTimer = -1;

    FlowControl(
            RouterLoop loop,
            ModelSchedulers pairs,
            FlowControlSettings settings,
            TenantQuotas quotas,
            FlowMetrics metrics,
            Admission admission,
            TokenWindow tokens) {
        this.admission = admission;
        this.tokens = tokens;
        this.loop = loop;
        this.pairs = pairs;
        this.settings = settings;
        this.quotas = quotas;
        this.metrics = metrics;
        this.saturation = new Saturation(
                settings.queue().maxQueuedPrefillTokens(),
                settings.queue().maxQueuedPrefillMs(),
                settings.queue().maxKvFraction());
    }

    void lifecycle(RequestLifecycle lifecycle) {
        this.lifecycle = lifecycle;
    }

    /**
     * Counts the request against its tenant's quota: null when it may go on, else why not. The rate-limit
     * headers go to its sink either way. Counters out of reach admit or refuse as configured.
     */
    Future<GenerationFailure> quota(ActiveRequest a) {
        RequestClass flow = a.request.flow();
        TenantSettings t = flow.settings();
        if (!t.limited()) {
            return Future.succeededFuture();
        }
        long tokens = (long) a.request.promptTokens().length + a.request.maxTokens();
        return quotas.take(flow.tenant(), t.requestsPerMinute(), t.tokensPerMinute(), tokens)
                .transform(ar -> {
                    if (ar.failed()) {
                        metrics.quotaUnavailable();
                        return Future.succeededFuture(
                                settings.quotaFailOpen() ? null : rejected(a, quotaUnavailable()));
                    }
                    QuotaDecision d = ar.result();
                    a.sink.onRateLimits(d.headers());
                    if (d.admitted()) {
                        a.quotaWindow = d.window();
                        a.quotaTokens = tokens;
                        return Future.succeededFuture();
                    }
                    return Future.succeededFuture(rejected(a, quotaExceeded(flow.tenant(), d)));
                });
    }

    /** Dispatches the request now if its model has room and nobody waits before it; else it waits. */
    void offer(ActiveRequest a) {
        // Counted on arrival, queued or not: the scaling signals size the pools for demand, not for what fits.
        tokens.arrived(a.request.model().name(), a.request.promptTokens().length, loop.nanoTime());
        FairQueue<ActiveRequest> queue = queue(a.request.model());
        if (queue.isEmpty() && !saturated(a.request.model())) {
            admit(a, queue, false);
            return;
        }
        RequestClass flow = a.request.flow();
        FairQueue.Offered<ActiveRequest> offered = queue.offer(flow.tenant(), flow.priority(), a);
        if (offered.evicted() != null) {
            // A heavier tenant's newest request makes room: the queue is full, and this tenant is the lighter.
            ActiveRequest out = offered.evicted();
            leave(out);
            String outTenant = out.request.flow().tenant();
            lifecycle.end(out, rejected(out, GenerationFailure.queueFull(outTenant, queue.waiting(outTenant))), null);
        }
        if (!offered.queued()) {
            lifecycle.end(
                    a, rejected(a, GenerationFailure.queueFull(flow.tenant(), queue.waiting(flow.tenant()))), null);
            return;
        }
        // Waiting holds no place of router.max-in-flight: the queue's own bounds cover it, and one tenant's
        // backlog must not fill the places the others' requests need.
        admission.release();
        a.holdsAdmission = false;
        a.queued = true;
        a.queuedNanos = loop.nanoTime();
        metrics.queued(flow.tenant(), flow.priority(), 1);
        long waitedMs = (a.queuedNanos - a.startNanos) / 1_000_000;
        long deadlineMs =
                flow.timeoutMs() > 0 ? flow.timeoutMs() : settings.queue().timeoutMs();
        if (flow.sloTtftMs() > 0) {
            deadlineMs = Math.min(deadlineMs, flow.sloTtftMs());
        }
        a.queueTimerId = loop.setTimer(Math.max(1, deadlineMs - waitedMs), () -> expire(a));
        scheduleDrain();
    }

    /**
     * The request's own deadline passed: waiting, it leaves with 429 and {@code Retry-After} (it was never
     * started); running, with 504.
     */
    void deadline(ActiveRequest a, long timeoutMs) {
        if (a.queued) {
            expire(a);
        } else {
            lifecycle.end(a, GenerationFailure.timeout(timeoutMs), null);
        }
    }

    /** A request ended, whatever ended it: out of the queue if it waited, its unused tokens back; room may be free. */
    void ended(ActiveRequest a) {
        if (a.queued) {
            leave(a);
            queue(a.request.model())
                    .remove(a.request.flow().tenant(), a.request.flow().priority(), a);
        }
        if (a.quotaTokens > 0) {
            long used = (long) a.request.promptTokens().length + a.stream.delivered();
            quotas.giveBack(a.request.flow().tenant(), a.quotaWindow, a.quotaTokens - used);
            a.quotaTokens = 0;
        }
        scheduleDrain();
    }

    /** Generated tokens reached the client: they count for the tenant's fairness and metrics. */
    void served(ActiveRequest a, int tokens) {
        RequestClass flow = a.request.flow();
        queue(a.request.model()).charge(flow.tenant(), tokens);
        metrics.tokens(flow.tenant(), flow.priority(), "out", tokens);
        this.tokens.served(a.request.model().name(), tokens, loop.nanoTime());
    }

    /**
     * A prefill is done: what share of prompts a prefill worker computes (none of a local prefill's), for the
     * scaling signals; and its prefill worker has room again.
     */
    void prefilled(ActiveRequest a, PrefillDone done) {
        long computed = a.local ? 0 : Math.max(0, done.promptTokens() - done.cachedTokens());
        tokens.prefilled(a.request.model().name(), done.promptTokens(), computed, loop.nanoTime());
        scheduleDrain();
    }

    /** Room may have freed (a prefill ended): look at the queues once this turn of the loop is over. */
    void scheduleDrain() {
        if (queues.values().stream().allMatch(FairQueue::isEmpty)) {
            if (pollTimer >= 0) {
                loop.cancelTimer(pollTimer); // nobody waits: nothing to look for
                pollTimer = -1;
            }
            return;
        }
        if (drainScheduled) {
            return;
        }
        drainScheduled = true;
        loop.execute(this::drain);
    }

    private void drain() {
        drainScheduled = false;
        boolean waiting = false;
        for (Map.Entry<ServedModel, FairQueue<ActiveRequest>> e : queues.entrySet()) {
            FairQueue<ActiveRequest> queue = e.getValue();
            while (!queue.isEmpty() && admission.hasRoom() && !saturated(e.getKey())) {
                ActiveRequest a = queue.poll();
                leave(a);
                admission.take();
                a.holdsAdmission = true;
                admit(a, queue, true);
            }
            waiting |= !queue.isEmpty();
        }
        if (waiting && pollTimer < 0) {
            pollTimer = loop.setTimer(POLL_MS, () -> {
                pollTimer = -1;
                drain();
            });
        }
    }

    private void admit(ActiveRequest a, FairQueue<ActiveRequest> queue, boolean waited) {
        RequestClass flow = a.request.flow();
        if (waited) {
            metrics.waited(flow.tenant(), flow.priority(), loop.nanoTime() - a.queuedNanos);
        }
        PairScheduler scheduler = pairs.of(a.request.model());
        java.util.Set<String> avoid =
                saturation.full(scheduler.workers(WorkerRole.PREFILL), scheduler.workers(WorkerRole.DECODE));
        if (flow.sloTtftMs() > 0 && !meetsSlo(a, avoid)) {
            return;
        }
        a.avoidFirst = avoid;
        metrics.admitted(flow.tenant(), flow.priority());
        int prompt = a.request.promptTokens().length;
        queue.charge(flow.tenant(), prompt);
        metrics.tokens(flow.tenant(), flow.priority(), "in", prompt);
        lifecycle.guarded(a, () -> lifecycle.dispatch(a));
    }

    /** The prefill workers that can still give the first token in time, or the request ends here. */
    private boolean meetsSlo(ActiveRequest a, java.util.Set<String> avoid) {
        long target = a.request.flow().sloTtftMs();
        double budgetMs = target - (loop.nanoTime() - a.startNanos) / 1e6;
        PairScheduler.SloMisses misses = pairs.of(a.request.model()).sloMisses(a.resumePrompt(), budgetMs);
        if (misses.all() || budgetMs <= 0) {
            lifecycle.end(a, rejected(a, GenerationFailure.sloUnattainable(target, misses.bestMs())), null);
            return false;
        }
        avoid.addAll(misses.workers());
        return true;
    }

    private void expire(ActiveRequest a) {
        if (!a.queued) {
            return;
        }
        long waitedMs = (loop.nanoTime() - a.queuedNanos) / 1_000_000;
        RequestClass flow = a.request.flow();
        boolean slo = flow.sloTtftMs() > 0
                && (flow.timeoutMs() <= 0 ? settings.queue().timeoutMs() : flow.timeoutMs()) > flow.sloTtftMs();
        GenerationFailure why = slo
                ? GenerationFailure.sloUnattainable(flow.sloTtftMs(), -1)
                : GenerationFailure.queueTimeout(waitedMs);
        lifecycle.end(a, rejected(a, why), null); // ended() takes it out of the queue
    }

    private void leave(ActiveRequest a) {
        a.queued = false;
        if (a.queueTimerId >= 0) {
            loop.cancelTimer(a.queueTimerId);
            a.queueTimerId = -1;
        }
        metrics.queued(a.request.flow().tenant(), a.request.flow().priority(), -1);
    }

    private GenerationFailure rejected(ActiveRequest a, GenerationFailure why) {
        metrics.rejected(a.request.flow().tenant(), a.request.flow().priority(), why.code());
        return why;
    }

    private boolean saturated(ServedModel model) {
        PairScheduler scheduler = pairs.of(model);
        return saturation.saturated(scheduler.workers(WorkerRole.PREFILL), scheduler.workers(WorkerRole.DECODE));
    }

    private FairQueue<ActiveRequest> queue(ServedModel model) {
        return queues.computeIfAbsent(
                model,
                m -> new FairQueue<>(
                        settings.queue().maxPerTenant(),
                        settings.queue().maxTotal(),
                        settings.fairness(),
                        settings.fairnessCreditTokens()));
    }

    /** Requests waiting, over every model. */
    int waiting() {
        int n = 0;
        for (FairQueue<ActiveRequest> q : queues.values()) {
            n += q.size();
        }
        return n;
    }

    private static GenerationFailure quotaExceeded(String tenant, QuotaDecision d) {
        return new GenerationFailure(
                        429,
                        "rate_limit_exceeded",
                        "rate_limit_exceeded",
                        "tenant '" + tenant + "' reached its " + d.exhausted() + " per minute quota; retry in "
                                + d.retryAfterSeconds() + " s")
                .withHeaders(d.headers())
                .withHeaders(Map.of(GenerationFailure.RETRY_AFTER, Long.toString(d.retryAfterSeconds())));
    }

    private static GenerationFailure quotaUnavailable() {
        return new GenerationFailure(
                503,
                "service_unavailable",
                "quota_unavailable",
                "the cluster's quota counters cannot be reached and flow-control.quota-partition is closed; retry shortly");
    }
}
