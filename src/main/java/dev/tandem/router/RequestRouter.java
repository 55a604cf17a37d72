package dev.tandem.router;

import dev.tandem.cluster.RequestIds;
import dev.tandem.cluster.SessionAffinity;
import dev.tandem.cluster.TenantQuotas;
import dev.tandem.config.FlowControlSettings;
import dev.tandem.config.RouterSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.metrics.FlowMetrics;
import dev.tandem.metrics.RouterMetrics;
import dev.tandem.protocol.FirstToken;
import dev.tandem.protocol.TokenBatch;
import dev.tandem.protocol.TokenEvent;
import dev.tandem.router.scaling.TokenWindow;
import dev.tandem.tracing.RequestTrace;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.ToLongFunction;

/**
 * A router's request core — the successor of the seed's {@code DisaggRouter}. Takes requests from the
 * APIs ({@link #submit}: admission, an id, the session's affinity), hands each to its
 * {@link RequestLifecycle}, and routes what comes back from the cluster to the right request: token
 * batches from decode workers; workers leaving the registry and decode workers that stall go to
 * {@link Failover}. All on one
 * {@link RouterLoop}, so request state needs no locks. Built with {@link #builder()}.
 */
public final class RequestRouter {
    /** The caller's handle on a submitted request. */
    public interface Handle {
        /** The client went away: stop the request on its workers and free everything it holds. */
        void cancel();

        /** Prompt tokens whose KV was reused, once the prefill is done (0 before, or when none was). */
        default int cachedTokens() {
            return 0;
        }
    }

    private final RouterLoop loop;
    private final Admission admission;
    private final RequestLifecycle lifecycle;
    private final Failover failover;
    private final RequestIds ids;
    private final SessionAffinity affinity;
    private final LoadTracker loads;
    private final RouterMetrics metrics;
    private final RouterSettings settings;
    private final FlowControl flow;
    private final FlowMetrics flowMetrics;
    private final Tracer tracer;

    private RequestRouter(Builder b) {
        this.tracer = b.tracer;
        this.loop = b.loop;
        this.admission = new Admission(b.settings.maxInFlight());
        this.ids = b.ids;
        this.affinity = b.affinity;
        this.loads = b.loads;
        this.metrics = b.metrics;
        this.settings = b.settings;
        this.flowMetrics = b.flowMetrics != null
                ? b.flowMetrics
                : new FlowMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), 1);
        this.flow = new FlowControl(b.loop, b.pairs, b.flowSettings, b.quotas, flowMetrics, admission, b.tokens);
        this.lifecycle = new RequestLifecycle(
                b.loop, b.dispatcher, b.pairs, b.loads, b.affinity, admission, b.metrics, b.identity, flow);
        this.failover = new Failover(b.loop, lifecycle, b.settings.decodeStallTimeoutMs());
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Starts a request; its output goes to {@code sink}. Call on the router's loop. */
    public Handle submit(GenerationRequest request, TokenSink sink) {
        ActiveRequest[] self = new ActiveRequest[1];
        ActiveRequest a = new ActiveRequest(
                request, sink, loop.nanoTime(), () -> loop.execute(() -> lifecycle.end(self[0], null, "cancelled")));
        self[0] = a;
        // The HTTP server's span is current here (Vert.x keeps it on the request's context), or none.
        a.trace = RequestTrace.begin(tracer, Context.current(), request.model().name(), request.promptTokens().length);
        GenerationFailure refused = admission.admit();
        if (refused != null) {
            // Refused before anything is taken: nothing to release.
            a.moveTo(RequestState.ENDED);
            metrics.ended(RouterMetrics.Outcome.REJECTED, 0, 0, 0);
            flowMetrics.rejected(request.flow().tenant(), request.flow().priority(), refused.code());
            sink.onError(refused);
            a.trace.ending(RouterMetrics.Outcome.REJECTED.label(), 0);
            a.trace.ended(refused.code());
            return a;
        }
        // The deadline covers everything, the quota check, waiting for an id and in the queue included; a
        // request's own deadline (X-Request-Timeout-Ms) can only shorten it.
        long own = request.flow().timeoutMs();
        long timeoutMs = own > 0 ? Math.min(own, settings.requestTimeoutMs()) : settings.requestTimeoutMs();
        a.timerId = loop.setTimer(timeoutMs, () -> lifecycle.guarded(a, () -> flow.deadline(a, timeoutMs)));
        flow.quota(a)
                .onComplete(quota -> lifecycle.guarded(a, () -> {
                    if (a.ended()) {
                        return;
                    }
                    GenerationFailure over = quota.succeeded()
                            ? quota.result()
                            : GenerationFailure.upstream("quota check failed: " + quota.cause());
                    if (over != null) {
                        lifecycle.end(a, over, null);
                        return;
                    }
                    identify(a, request);
                }));
        return a;
    }

    /** The request takes its cluster-unique id and its session's worker, then goes to flow control. */
    private void identify(ActiveRequest a, GenerationRequest request) {
        ids.next()
                .onComplete(id -> lifecycle.guarded(a, () -> {
                    if (a.ended()) {
                        return;
                    }
                    if (id.failed()) {
                        lifecycle.end(
                                a,
                                GenerationFailure.upstream(
                                        "no request id: " + id.cause().getMessage()),
                                null);
                        return;
                    }
                    a.id = id.result();
                    a.trace.identified(a.id);
                    lifecycle.track(a);
                    Future<String> pinned = request.affinityKey() == null
                            ? Future.succeededFuture()
                            : affinity.lookup(request.affinityKey());
                    pinned.onComplete(worker -> lifecycle.guarded(a, () -> {
                        if (a.ended()) {
                            return;
                        }
                        a.affinityWorker = worker.succeeded() ? worker.result() : null;
                        flow.offer(a);
                    }));
                }));
    }

    /** Requests waiting in the router's queue for room on the workers. */
    public int queued() {
        return flow.waiting();
    }

    /** Tokens from a decode worker's step, for any number of this router's requests. */
    public void onTokenBatch(TokenBatch batch) {
        for (TokenEvent e : batch.events()) {
            ActiveRequest a = lifecycle.get(e.requestId());
            // Only the request's current decode worker speaks for it; a replaced one may still be talking.
            if (a != null
                    && a.state() == RequestState.DECODING
                    && batch.workerId().equals(a.decodeWorker)) {
                lifecycle.onDecodeEvent(a, e);
            }
        }
    }

    /** A prefill worker's first token, ahead of its PREFILL_DONE: only the current dispatch's prefill worker's counts. */
    public void onFirstToken(FirstToken t) {
        ActiveRequest a = lifecycle.get(t.requestId());
        if (a != null
                && a.state() == RequestState.PREFILLING
                && a.attempt == t.attempt()
                && t.workerId().equals(a.prefillWorker)) {
            lifecycle.onFirstToken(a, t.token());
        }
    }

    /**
     * A worker left the registry (its member died, its heartbeat lapsed, or it withdrew): every request
     * it was serving goes to another worker ({@link Failover}).
     */
    public void onWorkerGone(String workerId) {
        failover.workerGone(workerId);
    }

    /**
     * Moves every decoding request whose decode worker is stuck ({@link Failover#moveStalled}).
     *
     * @param workerProgressNanos when a worker last reported a new decode step (on the loop's clock)
     */
    public void moveStalled(ToLongFunction<String> workerProgressNanos) {
        failover.moveStalled(workerProgressNanos);
    }

    /**
     * Forgets a session's affinity with each of these models (the seed's evict_kv_affinity): its next
     * request is scheduled afresh.
     */
    public Future<Void> forgetSession(String sessionKey, java.util.Collection<String> models) {
        List<Future<Void>> forgotten = new ArrayList<>();
        for (String model : models) {
            forgotten.add(affinity.forgetSession(GenerationRequest.affinityKey(model, sessionKey)));
        }
        return Future.all(forgotten).mapEmpty();
    }

    /** Requests with an id and not yet ended. */
    public int activeRequests() {
        return lifecycle.active().size();
    }

    /** From now on new requests are refused (503); those running go on. Loop only. */
    public void stopAdmitting() {
        admission.stopAdmitting();
    }

    public boolean stopping() {
        return admission.stopping();
    }

    /** Requests admitted and not yet ended (including those still waiting for an id, or in the router's queue). */
    public int admitted() {
        return admission.admitted() + flow.waiting();
    }

    /** This router's requests in flight per worker. */
    public LoadTracker loads() {
        return loads;
    }

    /** What the request core works with; the router node wires the real parts, unit tests fakes. */
    public static final class Builder {
        private RouterLoop loop;
        private Dispatcher dispatcher;
        private ModelSchedulers pairs;
        private LoadTracker loads;
        private SessionAffinity affinity;
        private RequestIds ids;
        private RouterMetrics metrics;
        private RouterSettings settings;
        private RouterIdentity identity;
        private FlowControlSettings flowSettings = TandemConfig.defaults().flowControl();
        private TenantQuotas quotas = TenantQuotas.UNLIMITED;
        private FlowMetrics flowMetrics;
        private Tracer tracer = OpenTelemetry.noop().getTracer("dev.tandem");
        private TokenWindow tokens = new TokenWindow(30_000_000_000L);

        private Builder() {}

        /** Where its requests' spans go; by default nowhere. */
        public Builder tracer(Tracer tracer) {
            this.tracer = tracer;
            return this;
        }

        /** Where admitted requests' tokens are counted for the scaling signals (by default a window no one reads). */
        public Builder scaling(TokenWindow tokens) {
            this.tokens = tokens;
            return this;
        }

        /** Tenants' queues and quotas; by default the default settings and no quota store (nothing limited). */
        public Builder flowControl(FlowControlSettings settings, TenantQuotas quotas, FlowMetrics metrics) {
            this.flowSettings = settings;
            this.quotas = quotas;
            this.flowMetrics = metrics;
            return this;
        }

        public Builder loop(RouterLoop loop) {
            this.loop = loop;
            return this;
        }

        public Builder dispatcher(Dispatcher dispatcher) {
            this.dispatcher = dispatcher;
            return this;
        }

        /** The pair schedulers and the load tracker they read: the core takes and gives back load there. */
        public Builder scheduling(ModelSchedulers pairs, LoadTracker loads) {
            this.pairs = pairs;
            this.loads = loads;
            return this;
        }

        /** The cluster-wide state it shares with the other replicas. */
        public Builder shared(SessionAffinity affinity, RequestIds ids) {
            this.affinity = affinity;
            this.ids = ids;
            return this;
        }

        public Builder metrics(RouterMetrics metrics) {
            this.metrics = metrics;
            return this;
        }

        public Builder settings(RouterSettings settings, RouterIdentity identity) {
            this.settings = settings;
            this.identity = identity;
            return this;
        }

        public RequestRouter build() {
            Objects.requireNonNull(loop, "loop");
            Objects.requireNonNull(dispatcher, "dispatcher");
            Objects.requireNonNull(pairs, "scheduling");
            Objects.requireNonNull(affinity, "shared");
            Objects.requireNonNull(metrics, "metrics");
            Objects.requireNonNull(settings, "settings");
            return new RequestRouter(this);
        }
    }
}
