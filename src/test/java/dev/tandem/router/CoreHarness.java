package dev.tandem.router;

import dev.tandem.cluster.SessionAffinity;
import dev.tandem.cluster.TenantQuotas;
import dev.tandem.config.FlowControlSettings;
import dev.tandem.config.RouterSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.metrics.FlowMetrics;
import dev.tandem.metrics.RouterMetrics;
import dev.tandem.protocol.FirstToken;
import dev.tandem.protocol.Sampling;
import dev.tandem.protocol.TokenBatch;
import dev.tandem.protocol.TokenEvent;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.scheduling.SchedulingObserver;
import dev.tandem.router.scheduling.SchedulingPlugins;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A router's request core with no cluster: a hand-driven loop, workers answered by the test
 * ({@link ScriptedDispatcher}), affinity in a map, ids from a counter. Worker ids are p1.. and d1..;
 * prompts are bytes ({@link ByteTokenizer}), so token 65 is "A" and 257 ends a sequence.
 */
final class CoreHarness {
    static final int CONTEXT = 512;
    /** The model every request of the harness runs on (the workers are registered as model "m", fingerprint 7). */
    static final ServedModel MODEL = new ServedModel(
            "m", 7, CONTEXT, ByteTokenizer.INSTANCE, dev.tandem.engine.tokenizer.ChatTemplate.ROLE_TAGS);

    static final int EOS = ByteTokenizer.EOS;

    final ManualLoop loop = new ManualLoop();
    final ScriptedDispatcher workers = new ScriptedDispatcher();
    final LoadTracker loads = new LoadTracker();
    final Map<String, String> affinity = new HashMap<>();
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final List<WorkerView> prefill = new ArrayList<>();
    final List<WorkerView> decode = new ArrayList<>();
    final RequestRouter router;
    /** Ids handed out so far; while {@link #holdIds} is set, {@link #pendingIds} waits for the test. */
    long nextId = 100;

    boolean holdIds;
    final List<Promise<Long>> pendingIds = new ArrayList<>();
    /** Every request submitted, in order. */
    final List<Submitted> submitted = new ArrayList<>();

    CoreHarness(int prefillWorkers, int decodeWorkers) {
        this(prefillWorkers, decodeWorkers, TandemConfig.defaults().router());
    }

    CoreHarness(int prefillWorkers, int decodeWorkers, RouterSettings settings) {
        this(prefillWorkers, decodeWorkers, settings, TandemConfig.defaults().flowControl(), TenantQuotas.UNLIMITED);
    }

    /** With these flow-control settings and quota store. */
    CoreHarness(
            int prefillWorkers,
            int decodeWorkers,
            RouterSettings settings,
            FlowControlSettings flow,
            TenantQuotas quotas) {
        for (int i = 1; i <= prefillWorkers; i++) {
            prefill.add(worker("p" + i, WorkerRole.PREFILL));
        }
        for (int i = 1; i <= decodeWorkers; i++) {
            decode.add(worker("d" + i, WorkerRole.DECODE));
        }
        PairScheduler pairs = defaultScheduler(role -> views(role == WorkerRole.PREFILL ? prefill : decode));
        router = RequestRouter.builder()
                .loop(loop)
                .dispatcher(workers)
                .scheduling(ModelSchedulers.shared(pairs), loads)
                .shared(new MapAffinity(), this::nextId)
                .metrics(new RouterMetrics(registry))
                .settings(settings, new RouterIdentity("router-t", "node-t"))
                .flowControl(flow, quotas, new FlowMetrics(registry, 100))
                .build();
    }

    /** A pair scheduler with the configuration's default profiles (the {@code default} policy's). */
    static PairScheduler defaultScheduler(java.util.function.Function<WorkerRole, List<WorkerView>> workers) {
        RouterSettings defaults = TandemConfig.defaults().router();
        return new PairScheduler(
                workers,
                SchedulingPlugins.profile("prefill", defaults.prefill()),
                SchedulingPlugins.profile("decode", defaults.decode()),
                SchedulingObserver.NONE);
    }

    private static WorkerView worker(String id, WorkerRole role) {
        return new WorkerView(new WorkerDescriptor(id, role, "m", 7, "node-w", 8, false, WorkerLoad.IDLE), 0);
    }

    /** The registry snapshot with this router's counts, as the node's WorkerViews gives it. */
    private List<WorkerView> views(List<WorkerView> workers) {
        return workers.stream()
                .map(w -> new WorkerView(w.worker(), loads.inFlight(w.id()), loads.prefillTokens(w.id())))
                .toList();
    }

    private Future<Long> nextId() {
        if (holdIds) {
            Promise<Long> p = Promise.promise();
            pendingIds.add(p);
            return p.future();
        }
        return Future.succeededFuture(nextId++);
    }

    /** A submitted request and what its client saw. */
    record Submitted(RecordingSink sink, RequestRouter.Handle handle, int[] prompt) {
        long id() {
            return sink.requestId;
        }
    }

    /** A prefill worker now reports this prefill rate (tokens per second) and these batch slots. */
    void prefillRate(String worker, double tokensPerSecond, int maxBatch) {
        prefill.replaceAll(w -> !w.id().equals(worker)
                ? w
                : new WorkerView(
                        new WorkerDescriptor(
                                w.id(),
                                w.role(),
                                w.model(),
                                w.modelFingerprint(),
                                "node-w",
                                maxBatch,
                                false,
                                w.load().withPrefillRate(tokensPerSecond)),
                        0));
    }

    /** Submits {@code request} as the APIs would, after the loop runs what it can. */
    Submitted submit(GenerationRequest request) {
        RecordingSink sink = new RecordingSink();
        RequestRouter.Handle handle = router.submit(request, sink);
        loop.runPending();
        Submitted submitted = new Submitted(sink, handle, request.promptTokens());
        this.submitted.add(submitted);
        return submitted;
    }

    /** "hi" for {@code maxTokens} tokens of this tenant class. */
    static GenerationRequest request(int maxTokens, RequestClass flow) {
        int[] prompt = ByteTokenizer.INSTANCE.encode("hi", true);
        return new GenerationRequest(prompt, maxTokens, Sampling.GREEDY, new int[0], List.of(), null, MODEL, flow);
    }

    /** Submits "hi" for {@code maxTokens} tokens (greedy), with an optional session key and stop strings. */
    Submitted submit(int maxTokens, String session, String... stops) {
        int[] prompt = ByteTokenizer.INSTANCE.encode("hi", true);
        RecordingSink sink = new RecordingSink();
        GenerationRequest request =
                new GenerationRequest(prompt, maxTokens, Sampling.GREEDY, new int[0], List.of(stops), session, MODEL);
        RequestRouter.Handle handle = router.submit(request, sink);
        loop.runPending();
        Submitted submitted = new Submitted(sink, handle, prompt);
        this.submitted.add(submitted);
        return submitted;
    }

    /** Runs prefill {@code n} to its first token and has its decode worker accept the request; its decode worker. */
    String decoding(int n, int firstToken) {
        workers.prefillDone(n, firstToken);
        loop.runPending();
        workers.decodeStart(workers.decodeStarts.size()).answer.complete();
        return workers.prefill(n).message.decodeWorkerId();
    }

    /** This router's requests in flight per worker, as "d1=1,p1=1" (sorted; empty when none). */
    String loads() {
        return new java.util.TreeMap<>(loads.snapshot())
                .entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(java.util.stream.Collectors.joining(","));
    }

    Submitted submit(int maxTokens) {
        return submit(maxTokens, null);
    }

    /** Tokens {@code tokens} from decode worker {@code worker} for request {@code id}, at its sequence number {@code seq}. */
    void tokens(String worker, long id, int seq, int... tokens) {
        send(worker, new TokenEvent(id, seq, tokens, null, null));
    }

    /** A prefill worker's first token for dispatch {@code attempt}, ahead of its PREFILL_DONE. */
    void firstToken(String worker, long id, int attempt, int token) {
        router.onFirstToken(new FirstToken(id, attempt, worker, token));
        loop.runPending();
    }

    void finish(String worker, long id, int seq, String reason, int... tokens) {
        send(worker, new TokenEvent(id, seq, tokens, reason, null));
    }

    void decodeError(String worker, long id, int seq, String error) {
        send(worker, new TokenEvent(id, seq, new int[0], null, error));
    }

    private void send(String worker, TokenEvent event) {
        router.onTokenBatch(new TokenBatch(worker, List.of(event)));
        loop.runPending();
    }

    /** Marks a worker draining in the registry snapshot: the not-draining filter leaves it out. */
    void drain(String worker) {
        for (List<WorkerView> pool : List.of(prefill, decode)) {
            pool.replaceAll(w -> !w.id().equals(worker)
                    ? w
                    : new WorkerView(
                            new WorkerDescriptor(
                                    w.id(), w.role(), w.model(), w.modelFingerprint(), "node-w", 8, true, w.load()),
                            0));
        }
    }

    void workerGone(String worker) {
        prefill.removeIf(w -> w.id().equals(worker));
        decode.removeIf(w -> w.id().equals(worker));
        router.onWorkerGone(worker);
        loop.runPending();
    }

    double outcomes(String outcome) {
        return registry.counter("tandem.requests", "outcome", outcome).count();
    }

    /**
     * Nothing is held once every request ended — no load, no admission, no entry, no timer — and every
     * client heard exactly one ending (none when it cancelled).
     */
    String leftovers() {
        List<String> left = new ArrayList<>();
        for (Submitted r : submitted) {
            int expected = r.sink().outcome().equals("open") ? 0 : 1;
            if (r.sink().endings != expected) {
                left.add("request " + r.id() + " ended " + r.sink().endings + " times");
            }
        }
        if (loads.total() != 0) {
            left.add("load " + loads.snapshot());
        }
        if (router.admitted() != 0) {
            left.add("admitted " + router.admitted());
        }
        if (router.activeRequests() != 0) {
            left.add("active " + router.activeRequests());
        }
        if (loop.timers() != 0) {
            left.add("timers " + loop.timers());
        }
        return String.join(", ", left);
    }

    private final class MapAffinity implements SessionAffinity {
        @Override
        public Future<String> lookup(String sessionKey) {
            return Future.succeededFuture(affinity.get(sessionKey));
        }

        @Override
        public Future<Void> record(String sessionKey, String decodeWorkerId) {
            affinity.put(sessionKey, decodeWorkerId);
            return Future.succeededFuture();
        }

        @Override
        public Future<Void> forgetSession(String sessionKey) {
            affinity.remove(sessionKey);
            return Future.succeededFuture();
        }

        @Override
        public Future<Void> forgetWorker(String decodeWorkerId) {
            affinity.values().removeIf(decodeWorkerId::equals);
            return Future.succeededFuture();
        }
    }
}
