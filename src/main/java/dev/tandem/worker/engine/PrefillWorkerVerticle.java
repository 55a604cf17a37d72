package dev.tandem.worker;

import dev.tandem.cluster.ShutdownDrain;
import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.config.WorkerSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvBlockPool;
import dev.tandem.metrics.WorkerMetrics;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.FirstToken;
import dev.tandem.protocol.ModelCard;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.worker.kv.KvTransferCodec;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A prefill worker: computes a prompt's KV cache and first token off the event loop, ships the KV to
 * the chosen decode worker in bounded chunks, and answers PREFILL_DONE once the decode worker has
 * acknowledged the whole cache.
 */
public final class PrefillWorkerVerticle extends VerticleBase {
    private static final Logger LOG = Logger.getLogger(PrefillWorkerVerticle.class.getName());

    /** A prompt accepted by this worker; {@code cancelled} is read by the compute thread between positions. */
    private static final class Job {
        final PrefillRequest request;
        final long acceptedNanos = System.nanoTime();
        volatile boolean cancelled;

        Job(PrefillRequest request) {
            this.request = request;
        }
    }

    private final String workerId;
    private final Engine engine;
    private final ModelCard card;
    private final WorkerSettings settings;
    private final WorkerAnnouncer announcer;
    private final String nodeId;
    private final WorkerMetrics metrics;
    /** Where the KV of the prompts it computes comes from and goes back to (shared with the node's workers). */
    private final KvBlockPool pool;

    private final Map<Long, Job> jobs = new HashMap<>();
    private WorkerExecutor compute;
    private WorkerControl control;
    /** Computed prompt blocks kept for prompts that share their prefix (worker.prefix-cache-bytes). */
    private BlockCache prefixCache;

    private KvEventPublisher events;
    private KvShipper shipper;

    public PrefillWorkerVerticle(
            String workerId,
            Engine engine,
            WorkerSettings settings,
            WorkerAnnouncer announcer,
            String nodeId,
            WorkerMetrics metrics,
            KvBlockPool pool) {
        this.pool = pool;
        this.workerId = workerId;
        this.metrics = metrics;
        this.engine = engine;
        this.card = ModelCards.of(engine);
        this.settings = settings;
        this.announcer = announcer;
        this.nodeId = nodeId;
    }

    @Override
    public Future<?> start() {
        compute = vertx.createSharedWorkerExecutor("tandem-prefill-" + workerId, settings.prefillConcurrency());
        prefixCache = new BlockCache(engine.kvLayout(), engine.info().fingerprint(), settings.prefixCacheBytes());
        events = new KvEventPublisher(vertx, workerId, prefixCache, settings.heartbeatMs());
        metrics.kvCache(prefixCache::bytes, prefixCache::blocks, prefixCache::evictions);
        metrics.kvCapacity(settings.prefixCacheBytes());
        shipper = new KvShipper(vertx, settings, engine, metrics);
        control = new WorkerControl(vertx, workerId, announcer, this::descriptor);
        return control.start(List.of(
                vertx.eventBus().<Object>consumer(Addresses.prefill(workerId), this::onPrefill),
                vertx.eventBus().<Object>consumer(Addresses.prefillCancel(workerId), this::onCancel),
                events.start()));
    }

    @Override
    public Future<?> stop() {
        events.stop();
        return control.stop().eventually(() -> compute.close());
    }

    /** This worker as it is now: its registry entry, heartbeat and status answer. */
    public WorkerDescriptor descriptor() {
        return new WorkerDescriptor(
                workerId,
                WorkerRole.PREFILL,
                engine.info().name(),
                engine.info().fingerprint(),
                nodeId,
                settings.prefillConcurrency(),
                control.draining(),
                new WorkerLoad(queuedTokens(), 0, 0, 0, 0, jobs.size(), 0, 0),
                settings.prefixCacheBytes() > 0
                        ? new CacheSpec(engine.kvLayout().blockSize(), false)
                        : null,
                card);
    }

    /** The prefix cache (tests). */
    BlockCache prefixCache() {
        return prefixCache;
    }

    /** Prompt tokens accepted and not yet shipped. */
    private int queuedTokens() {
        int queued = 0;
        for (Job job : jobs.values()) {
            queued += job.request.promptTokens().length;
        }
        return queued;
    }

    /** Drains before a shutdown: no new prompts, waits (up to the timeout) for those it holds. */
    public Future<Void> drainForShutdown(long timeoutMs) {
        return ShutdownDrain.run(context, control::startDraining, jobs::isEmpty, timeoutMs);
    }

    /** A router on a cluster member that left will never take the KV: stop computing it. */
    public void onRouterNodeLeft(String nodeId) {
        context.runOnContext(v -> {
            for (Job job : jobs.values()) {
                if (nodeId.equals(job.request.routerNode())) {
                    job.cancelled = true;
                }
            }
        });
    }

    private void onPrefill(Message<Object> message) {
        PrefillRequest request = WorkerMessages.decodeOrFail(message, PrefillRequest.CODEC);
        if (request == null) {
            return;
        }
        String invalid = PromptPrefill.invalid(engine, request.promptTokens());
        if (invalid != null) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), invalid);
            return;
        }
        long kvBytes = KvTransferCodec.encodedSize(engine.kvLayout(), request.promptTokens().length);
        if (kvBytes > settings.maxKvTransferBytes()) {
            message.fail(
                    WorkerFailure.KV_TOO_LARGE.code(),
                    "the prompt's KV cache is " + kvBytes + " bytes, over the limit of " + settings.maxKvTransferBytes()
                            + " bytes (max_kv_transfer_bytes)");
            return;
        }
        if (jobs.containsKey(request.requestId())) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), "request " + request.requestId() + " is already prefilling");
            return;
        }
        int queued = queuedTokens();
        if (queued > 0 && queued + request.promptTokens().length > settings.maxQueuedPrefillTokens()) {
            // A bounded queue keeps the wait of what was accepted bounded; the router tries another worker.
            metrics.refused();
            message.fail(
                    WorkerFailure.BUSY.code(),
                    "prefill queue is full (" + queued + " tokens queued, limit " + settings.maxQueuedPrefillTokens()
                            + ")");
            return;
        }
        Job job = new Job(request);
        jobs.put(request.requestId(), job);
        // The KV is encoded in the same task, right after its prefill: as a task of its own it queued behind
        // every prompt accepted meanwhile (PrefillQueueOrderTest), on a thread of its own it cost two hops.
        compute.<Computed>executeBlocking(() -> computeAndEncode(job), false)
                .compose(computed -> {
                    sendFirstToken(job, computed.prefilled().firstToken());
                    return ship(job, computed);
                })
                .onComplete(ar -> {
                    jobs.remove(request.requestId());
                    if (ar.succeeded() && job.cancelled) {
                        // Cancelled while the KV travelled: the router's cancel may have overtaken the chunks, so this
                        // worker — their sender, hence ordered after them — frees them on the decode worker. Scoped to
                        // this attempt: the router may already have sent the next one to the same decode worker.
                        vertx.eventBus()
                                .send(
                                        Addresses.decodeCancel(request.decodeWorkerId()),
                                        CancelRequest.CODEC.encode(new CancelRequest(
                                                request.requestId(), "cancelled", request.attempt())));
                        WorkerMessages.failCancelled(message, request.requestId());
                    } else if (ar.succeeded()) {
                        message.reply(PrefillDone.CODEC.encode(ar.result()));
                    } else {
                        replyFailure(message, job, ar.cause());
                    }
                });
    }

    /**
     * The first token goes to the router now, not after the KV's acknowledgement: the time the KV takes to
     * reach the decode worker is no longer part of the time to first token (PREFILL_DONE still follows).
     */
    private void sendFirstToken(Job job, int token) {
        PrefillRequest r = job.request;
        if (r.routerId() == null || job.cancelled) {
            return;
        }
        vertx.eventBus()
                .send(
                        Addresses.routerFirstTokens(r.routerId()),
                        FirstToken.CODEC.encode(new FirstToken(r.requestId(), r.attempt(), workerId, token)));
    }

    private PromptPrefill.Prefilled computeKv(Job job) {
        long start = System.nanoTime();
        metrics.prefillQueued(start - job.acceptedNanos);
        PromptPrefill.Prefilled prefilled = PromptPrefill.run(
                engine, pool, prefixCache, job.request.promptTokens(), job.request.sampling(), () -> job.cancelled);
        metrics.prefillComputed(System.nanoTime() - start);
        return prefilled;
    }

    /** A prompt's KV and first token, and the KV's first round encoded for the wire. */
    private record Computed(PromptPrefill.Prefilled prefilled, KvShipper.Round first) {}

    private Computed computeAndEncode(Job job) {
        PromptPrefill.Prefilled prefilled = computeKv(job);
        try {
            return new Computed(prefilled, shipper.encode(job.request, prefilled.cache()));
        } catch (RuntimeException e) {
            prefilled.cache().free();
            throw e;
        }
    }

    /** Ships the KV, then answers with the first token; the KV is let go either way. */
    private Future<PrefillDone> ship(Job job, Computed computed) {
        PrefillRequest r = job.request;
        PromptPrefill.Prefilled prefilled = computed.prefilled();
        return shipper.ship(r, prefilled.cache(), computed.first(), () -> job.cancelled)
                .map(shipped -> new PrefillDone(
                        r.requestId(),
                        prefilled.firstToken(),
                        r.promptTokens().length,
                        shipped.bytes(),
                        prefilled.micros(),
                        prefilled.cachedTokens()))
                .onComplete(ar -> prefilled.cache().free());
    }

    private void replyFailure(Message<Object> message, Job job, Throwable cause) {
        if (job.cancelled || cause instanceof CancellationException) {
            WorkerMessages.failCancelled(message, job.request.requestId());
        } else if (cause instanceof ReplyException re) {
            // The decode worker refused or never answered the KV: pass its reason on to the router.
            WorkerFailure f = WorkerFailure.of(re);
            message.fail(
                    (f == null ? WorkerFailure.KV_TRANSFER_FAILED : f).code(),
                    "KV transfer to " + job.request.decodeWorkerId() + " failed: " + re.getMessage());
        } else if (cause instanceof IllegalArgumentException) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), cause.getMessage());
        } else {
            LOG.log(Level.WARNING, "prefill of request " + job.request.requestId() + " failed", cause);
            message.fail(WorkerFailure.INTERNAL.code(), "prefill failed: " + cause);
        }
    }

    private void onCancel(Message<Object> message) {
        CancelMessages.decode(message).map(c -> jobs.get(c.requestId())).ifPresent(job -> job.cancelled = true);
    }
}
