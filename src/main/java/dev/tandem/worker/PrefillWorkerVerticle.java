package dev.tandem.worker;

import dev.tandem.cluster.ShutdownDrain;
import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.config.WorkerSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.Sampler;
import dev.tandem.metrics.WorkerMetrics;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.KvAck;
import dev.tandem.protocol.KvChunk;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.worker.kv.KvTransferCodec;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
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

    private record Computed(int firstToken, List<Buffer> chunks, long micros) {}

    private final String workerId;
    private final Engine engine;
    private final WorkerSettings settings;
    private final WorkerAnnouncer announcer;
    private final String nodeId;
    private final WorkerMetrics metrics;
    private final Map<Long, Job> jobs = new HashMap<>();
    private WorkerExecutor compute;
    private WorkerControl control;

    public PrefillWorkerVerticle(
            String workerId,
            Engine engine,
            WorkerSettings settings,
            WorkerAnnouncer announcer,
            String nodeId,
            WorkerMetrics metrics) {
        this.workerId = workerId;
        this.metrics = metrics;
        this.engine = engine;
        this.settings = settings;
        this.announcer = announcer;
        this.nodeId = nodeId;
    }

    @Override
    public Future<?> start() {
        compute = vertx.createSharedWorkerExecutor("tandem-prefill-" + workerId, settings.prefillConcurrency());
        control = new WorkerControl(vertx, workerId, announcer, this::descriptor);
        return control.start(List.of(
                vertx.eventBus().<Object>consumer(Addresses.prefill(workerId), this::onPrefill),
                vertx.eventBus().<Object>consumer(Addresses.prefillCancel(workerId), this::onCancel)));
    }

    @Override
    public Future<?> stop() {
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
                new WorkerLoad(queuedTokens(), 0, 0, 0, 0, jobs.size(), 0, 0));
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
        PrefillRequest request;
        try {
            request = PrefillRequest.CODEC.decode(JsonCodec.object(message.body()));
        } catch (ProtocolException e) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), e.getMessage());
            return;
        }
        String invalid = validate(request);
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
        compute.<Computed>executeBlocking(() -> computeKv(job), false)
                .compose(computed -> ship(job, computed))
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
                        message.fail(
                                WorkerFailure.CANCELLED.code(), "request " + request.requestId() + " was cancelled");
                    } else if (ar.succeeded()) {
                        message.reply(PrefillDone.CODEC.encode(ar.result()));
                    } else {
                        replyFailure(message, job, ar.cause());
                    }
                });
    }

    private String validate(PrefillRequest request) {
        int[] tokens = request.promptTokens();
        int seqLen = engine.info().config().seqLen();
        if (tokens.length == 0 || tokens.length >= seqLen) {
            return "prompt has " + tokens.length + " tokens; it must have 1 to " + (seqLen - 1);
        }
        int vocab = engine.info().config().vocabSize();
        for (int t : tokens) {
            if (t < 0 || t >= vocab) {
                return "token id " + t + " is outside the vocabulary [0, " + vocab + ")";
            }
        }
        return null;
    }

    private Computed computeKv(Job job) {
        long start = System.nanoTime();
        metrics.prefillQueued(start - job.acceptedNanos);
        KvCache cache = engine.newCache();
        float[] logits = engine.prefill(cache, job.request.promptTokens(), () -> job.cancelled);
        int first = Sampler.sample(logits, EngineSampling.of(job.request.sampling()), cache.length());
        List<Buffer> chunks = KvTransferCodec.encode(cache, engine.info().fingerprint(), settings.kvChunkBytes());
        long nanos = System.nanoTime() - start;
        metrics.prefillComputed(nanos);
        long micros = nanos / 1000;
        cache.free();
        return new Computed(first, chunks, micros);
    }

    /** Sends the chunks in order; the last one is a request whose reply is the decode worker's ack. */
    private Future<PrefillDone> ship(Job job, Computed computed) {
        if (job.cancelled) {
            return Future.failedFuture(new CancellationException());
        }
        long id = job.request.requestId();
        String address = Addresses.decodeKv(job.request.decodeWorkerId());
        List<Buffer> chunks = computed.chunks();
        long bytes = 0;
        for (int i = 0; i < chunks.size() - 1; i++) {
            bytes += chunks.get(i).length();
            vertx.eventBus()
                    .send(
                            address,
                            chunks.get(i),
                            new KvChunk(id, i, false, chunks.get(i), job.request.attempt()).deliveryOptions());
        }
        int lastIndex = chunks.size() - 1;
        Buffer last = chunks.get(lastIndex);
        long total = bytes + last.length();
        long shipStart = System.nanoTime();
        DeliveryOptions options = new KvChunk(id, lastIndex, true, last, job.request.attempt())
                .deliveryOptions()
                .setSendTimeout(settings.kvParkTimeoutMs());
        return vertx.eventBus().<JsonObject>request(address, last, options).map(reply -> {
            KvAck ack = KvAck.CODEC.decode(reply.body());
            if (ack.bytesReceived() != total) {
                throw new IllegalStateException(
                        "decode worker acknowledged " + ack.bytesReceived() + " of " + total + " bytes");
            }
            metrics.kvShipped(System.nanoTime() - shipStart, total);
            return new PrefillDone(
                    id, computed.firstToken(), job.request.promptTokens().length, total, computed.micros());
        });
    }

    private void replyFailure(Message<Object> message, Job job, Throwable cause) {
        if (job.cancelled || cause instanceof CancellationException) {
            message.fail(WorkerFailure.CANCELLED.code(), "request " + job.request.requestId() + " was cancelled");
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
        try {
            Job job = jobs.get(
                    CancelRequest.CODEC.decode(JsonCodec.object(message.body())).requestId());
            if (job != null) {
                job.cancelled = true;
            }
        } catch (ProtocolException e) {
            LOG.fine(() -> "ignoring malformed cancel: " + e.getMessage());
        }
    }
}
