package dev.tandem.worker.engine;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.FirstToken;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.tracing.Spans;
import dev.tandem.tracing.TraceHeaders;
import dev.tandem.worker.CancelMessages;
import dev.tandem.worker.Throughput;
import dev.tandem.worker.WorkerMessages;
import dev.tandem.worker.kv.KvShipper;
import dev.tandem.worker.kv.KvTransferCodec;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
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
public final class PrefillWorkerVerticle extends EngineWorkerVerticle {
    private static final Logger LOG = Logger.getLogger(PrefillWorkerVerticle.class.getName());

    /** A prompt accepted by this worker; {@code cancelled} is read by the compute thread between positions. */
    private static final class Job {
        final PrefillRequest request;
        /** The prompt's tokens its prefix cache did not hold when it was accepted: the work it queues. */
        final int uncachedTokens;

        final long acceptedNanos = System.nanoTime();
        /** The router's trace context; the spans below are its children (invalid when not traced). */
        final Context trace;

        final Span queued;
        volatile boolean cancelled;
        /** Its prompt is computed: shipping its KV takes no compute, so it no longer counts as queued work. */
        volatile boolean computed;

        Job(PrefillRequest request, int uncachedTokens, Context trace, Span queued) {
            this.request = request;
            this.uncachedTokens = uncachedTokens;
            this.trace = trace;
            this.queued = queued;
        }
    }

    private final Map<Long, Job> jobs = new HashMap<>();
    private final Throughput rate;
    private KvShipper shipper;

    public PrefillWorkerVerticle(String workerId, EngineWorkerSetup setup) {
        super(WorkerRole.PREFILL, workerId, setup);
        this.rate = Throughput.prefillTokens(engine.expectedPrefillTokensPerSecond());
    }

    @Override
    long cacheBytes() {
        return settings.prefixCacheBytes();
    }

    @Override
    int computeThreads() {
        return settings.prefillConcurrency();
    }

    @Override
    int capacity() {
        return settings.prefillConcurrency();
    }

    @Override
    List<MessageConsumer<?>> roleConsumers(EventBus bus) {
        shipper = new KvShipper(vertx, settings, engine, metrics);
        return List.of(
                bus.<Object>consumer(Addresses.prefill(workerId), this::onPrefill),
                bus.<Object>consumer(Addresses.prefillCancel(workerId), this::onCancel));
    }

    @Override
    WorkerLoad load() {
        return WorkerLoad.prefill(queuedTokens(), jobs.size())
                .withPrefillRate(rate.perSecond())
                .withKvTransferRate(shipper == null ? 0 : shipper.bytesPerSecond());
    }

    @Override
    boolean idle() {
        return jobs.isEmpty();
    }

    /** The prefix cache (tests). */
    BlockCache prefixCache() {
        return cache;
    }

    /**
     * Prompt tokens accepted and not yet computed, less those the prefix cache held at acceptance: a queue of
     * mostly cached prompts is short in time, and counting their cached tokens sent long uncached prompts
     * elsewhere to wait (benchmarks.md, "Results: four traces").
     */
    private int queuedTokens() {
        int queued = 0;
        for (Job job : jobs.values()) {
            queued += job.computed ? 0 : job.uncachedTokens;
        }
        return queued;
    }

    /** What {@code prompt} would compute here now: at least its last token, whose logits give the first. */
    private int uncachedTokens(int[] prompt) {
        if (cache == null) {
            return prompt.length;
        }
        return prompt.length - cache.cachedTokens(prompt, (prompt.length - 1) / cache.blockSize());
    }

    /** A router on a cluster member that left will never take the KV: stop computing it. */
    @Override
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
        int uncached = uncachedTokens(request.promptTokens());
        if (queued > 0 && queued + uncached > settings.maxQueuedPrefillTokens()) {
            // A bounded queue keeps the wait of what was accepted bounded; the router tries another worker.
            metrics.refused();
            message.fail(
                    WorkerFailure.BUSY.code(),
                    "prefill queue is full (" + queued + " tokens queued, limit " + settings.maxQueuedPrefillTokens()
                            + ")");
            return;
        }
        Context trace = TraceHeaders.parentOf(message);
        Job job = new Job(request, uncached, trace, Spans.start(tracer, "tandem.prefill.queue", trace));
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
        job.queued.end();
        Span span = Spans.start(tracer, "tandem.prefill.compute", job.trace);
        PromptPrefill.Prefilled prefilled;
        try {
            prefilled = PromptPrefill.run(
                    engine, pool, cache, job.request.promptTokens(), job.request.sampling(), () -> job.cancelled);
        } finally {
            span.end();
        }
        long nanos = System.nanoTime() - start;
        metrics.prefillComputed(nanos);
        int computed = job.request.promptTokens().length - prefilled.cachedTokens();
        rate.record(computed, nanos);
        span.setAttribute("tandem.prompt_tokens", (long) job.request.promptTokens().length)
                .setAttribute("tandem.computed_tokens", (long) computed);
        return prefilled;
    }

    /** A prompt's KV and first token, and the KV's first round encoded for the wire. */
    private record Computed(PromptPrefill.Prefilled prefilled, KvShipper.Round first) {}

    private Computed computeAndEncode(Job job) {
        PromptPrefill.Prefilled prefilled = computeKv(job);
        job.computed = true;
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
        // Its context rides on the first chunk: the decode worker's receipt of the KV is its child.
        Span transfer = Spans.start(tracer, "tandem.kv.transfer", job.trace, SpanKind.PRODUCER)
                .setAttribute("tandem.decode_worker", r.decodeWorkerId());
        return shipper.ship(r, prefilled.cache(), computed.first(), () -> job.cancelled, transfer)
                .map(shipped -> new PrefillDone(
                        r.requestId(),
                        prefilled.firstToken(),
                        r.promptTokens().length,
                        shipped.bytes(),
                        prefilled.micros(),
                        prefilled.cachedTokens()))
                .onComplete(ar -> {
                    prefilled.cache().free();
                    if (ar.succeeded()) {
                        transfer.setAttribute("tandem.kv_bytes", ar.result().kvBytes());
                    } else {
                        transfer.setStatus(StatusCode.ERROR, String.valueOf(ar.cause()));
                    }
                    transfer.end();
                });
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
