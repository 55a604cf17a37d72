package dev.tandem.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;

/**
 * A router's request meters. Labels are bounded: outcomes and affinity results are fixed sets; no
 * request id, session key or prompt ever becomes a label.
 */
public final class RouterMetrics {
    /** How a request ended, for {@code tandem_requests_total{outcome}}. */
    public enum Outcome {
        OK("ok"),
        FAILED_OVER("failed_over"),
        CLIENT_ERROR("client_error"),
        CANCELLED("cancelled"),
        TIMEOUT("timeout"),
        ERROR("error"),
        REJECTED("rejected");

        final String label;

        Outcome(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    private final MeterRegistry registry;
    private final Timer ttft;
    private final Timer itl;
    private final Timer e2e;
    private final Timer queue;
    private final Counter promptTokens;
    private final Counter generatedTokens;
    private final Counter affinityHits;
    private final Counter affinityMisses;
    private final Counter retries;
    private final Counter failovers;
    private final Map<Outcome, Counter> outcomes = new ConcurrentHashMap<>();
    private final Counter cachedPromptTokens;
    private final Counter computedPromptTokens;
    private final DistributionSummary kvMoved;
    private final Counter localPrefills;
    private final Counter remotePrefills;
    private final List<Object> counted = new ArrayList<>();

    public RouterMetrics(MeterRegistry registry) {
        this.registry = registry;
        ttft = timer("tandem.request.ttft", "time from admission to the first token", Buckets.TTFT);
        itl = timer("tandem.request.itl", "time between consecutive tokens of a stream", Buckets.ITL);
        e2e = timer("tandem.request.e2e", "time from admission to the last token", Buckets.E2E);
        queue = timer(
                "tandem.request.queue",
                "time from admission until prefill is dispatched (id, affinity, scheduling)",
                Buckets.STAGE);
        promptTokens = Counter.builder("tandem.prompt.tokens")
                .description("prompt tokens of admitted requests")
                .register(registry);
        generatedTokens = Counter.builder("tandem.generated.tokens")
                .description("tokens delivered to clients")
                .register(registry);
        affinityHits = Counter.builder("tandem.affinity")
                .tag("result", "hit")
                .description("session requests sent to the decode worker that holds their session")
                .register(registry);
        affinityMisses = Counter.builder("tandem.affinity")
                .tag("result", "miss")
                .description("session requests sent to the decode worker that holds their session")
                .register(registry);
        retries = Counter.builder("tandem.request.retries")
                .description("dispatches after the first (retries and failovers)")
                .register(registry);
        failovers = Counter.builder("tandem.request.failovers")
                .description("streams moved to another decode worker after tokens were sent")
                .register(registry);
        cachedPromptTokens = Counter.builder("tandem.prompt.tokens.cached")
                .description("prompt tokens whose KV was reused (prefix caches) rather than computed")
                .register(registry);
        computedPromptTokens = Counter.builder("tandem.prompt.tokens.computed")
                .description("prompt tokens prefilled")
                .register(registry);
        kvMoved = DistributionSummary.builder("tandem.request.kv.moved")
                .baseUnit("bytes")
                .description("KV bytes shipped from prefill to decode worker per dispatch (0 for a local prefill)")
                .serviceLevelObjectives(1, 1 << 16, 1 << 20, 1 << 24, 1 << 28, 1L << 30)
                .register(registry);
        localPrefills = Counter.builder("tandem.prefill.placement")
                .tag("where", "decode-worker")
                .description("dispatches by where the prompt is prefilled")
                .register(registry);
        remotePrefills = Counter.builder("tandem.prefill.placement")
                .tag("where", "prefill-worker")
                .description("dispatches by where the prompt is prefilled")
                .register(registry);
        for (Outcome o : Outcome.values()) {
            outcomes.put(
                    o,
                    Counter.builder("tandem.requests")
                            .tag("outcome", o.label)
                            .description("requests by how they ended")
                            .register(registry));
        }
    }

    /** Requests ended so far, whatever their outcome (the web console's requests/s is its rate). */
    public double requestsEnded() {
        double sum = 0;
        for (Counter c : outcomes.values()) {
            sum += c.count();
        }
        return sum;
    }

    public double affinityHits() {
        return affinityHits.count();
    }

    public double affinityMisses() {
        return affinityMisses.count();
    }

    /** The router's admitted-and-not-ended count, read at scrape time. */
    public void inFlight(IntSupplier inFlight) {
        Gauge.builder("tandem.router.in.flight", inFlight::getAsInt)
                .description("requests admitted and not yet ended")
                .register(registry);
    }

    private Timer timer(String name, String description, Duration[] buckets) {
        return Timer.builder(name)
                .description(description)
                .serviceLevelObjectives(buckets)
                .minimumExpectedValue(buckets[0])
                .maximumExpectedValue(buckets[buckets.length - 1])
                .register(registry);
    }

    public void ended(Outcome outcome, int prompt, int generated, long e2eNanos) {
        outcomes.get(outcome).increment();
        if (outcome != Outcome.REJECTED) {
            promptTokens.increment(prompt);
            generatedTokens.increment(generated);
            e2e.record(e2eNanos, TimeUnit.NANOSECONDS);
        }
    }

    public void firstToken(long nanosSinceAdmission) {
        ttft.record(nanosSinceAdmission, TimeUnit.NANOSECONDS);
    }

    public void interToken(long nanos) {
        itl.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void queued(long nanos) {
        queue.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void affinity(boolean hit) {
        (hit ? affinityHits : affinityMisses).increment();
    }

    /**
     * The router's prefix index, read at scrape time: block→worker entries, workers indexed, the lag of
     * the latest cache event applied, snapshots asked for and gaps seen in workers' event numbers.
     */
    public void prefixIndex(
            DoubleSupplier entries,
            DoubleSupplier workers,
            DoubleSupplier lagMillis,
            DoubleSupplier snapshots,
            DoubleSupplier gaps,
            DoubleSupplier dropped) {
        // A FunctionCounter holds its object weakly: these suppliers must outlive a GC.
        counted.addAll(List.of(snapshots, gaps, dropped));
        Gauge.builder("tandem.prefix.index.entries", entries::getAsDouble)
                .description("block-to-worker entries in this router's prefix index")
                .register(registry);
        Gauge.builder("tandem.prefix.index.workers", workers::getAsDouble)
                .description("workers whose KV caches this router indexes")
                .register(registry);
        Gauge.builder("tandem.prefix.index.event.lag", lagMillis::getAsDouble)
                .baseUnit("milliseconds")
                .description("from a worker sending its latest cache events to this router applying them")
                .register(registry);
        FunctionCounter.builder("tandem.prefix.index.snapshots", snapshots, DoubleSupplier::getAsDouble)
                .description("cache snapshots asked of workers (late start, gaps)")
                .register(registry);
        FunctionCounter.builder("tandem.prefix.index.gaps", gaps, DoubleSupplier::getAsDouble)
                .description("gaps seen in workers' cache event numbers")
                .register(registry);
        FunctionCounter.builder("tandem.prefix.index.dropped", dropped, DoubleSupplier::getAsDouble)
                .description("cached blocks not indexed because the index was at its share of the memory budget")
                .register(registry);
    }

    /** A dispatch: prefilled on the decode worker itself (no KV moves) or on a prefill worker. */
    public void dispatched(boolean local) {
        (local ? localPrefills : remotePrefills).increment();
    }

    /** A request's prompt: tokens reused from a cache and tokens computed. */
    public void promptTokens(int cached, int computed) {
        cachedPromptTokens.increment(cached);
        computedPromptTokens.increment(computed);
    }

    public void kvMoved(long bytes) {
        kvMoved.record(bytes);
    }

    public void retry(boolean failover) {
        retries.increment();
        if (failover) {
            failovers.increment();
        }
    }
}
