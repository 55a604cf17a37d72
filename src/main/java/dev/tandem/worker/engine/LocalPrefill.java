package dev.tandem.worker.engine;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvBlockPool;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.worker.CancelMessages;
import dev.tandem.worker.Throughput;
import dev.tandem.worker.WorkerMessages;
import dev.tandem.worker.kv.KvInbox;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.eventbus.Message;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A decode worker prefilling a prompt itself — conditional disaggregation: when it holds the prompt's
 * prefix and only a short rest is left to compute, the router sends the PREFILL_REQUEST here instead
 * of to a prefill worker, and no KV moves. The prefix comes from the worker's kept blocks, the rest is
 * computed on its compute thread in chunks of {@code worker.local-prefill-chunk-tokens}, each its own
 * task, so the decode steps handed to that thread meanwhile run between them and the running sequences
 * wait for one chunk, not the whole prompt (with no sequence running, the rest goes at once); the KV is
 * parked for the DECODE_REQUEST that follows, as if it had arrived. Runs on the worker's event loop.
 */
final class LocalPrefill {
    private static final Logger LOG = Logger.getLogger(LocalPrefill.class.getName());

    private final class Job {
        final PrefillRequest request;
        final PromptPrefill.Chunked prefill;
        volatile boolean cancelled;

        Job(PrefillRequest request) {
            this.request = request;
            this.prefill = new PromptPrefill.Chunked(
                    engine, pool, kept, request.promptTokens(), request.sampling(), () -> cancelled);
        }
    }

    private final String workerId;
    private final Engine engine;
    private final KvBlockPool pool;
    private final WorkerExecutor compute;
    private final BlockCache kept;
    private final KvInbox inbox;
    private final Supplier<String> noRoom;
    private final int chunkTokens;
    private final BooleanSupplier decoding;
    private final Throughput rate;
    private final Map<Long, Job> jobs = new HashMap<>();

    /**
     * @param noRoom      why the worker cannot take one more request's KV, or null
     * @param chunkTokens prompt tokens computed between two decode steps
     * @param decoding    whether the worker has sequences to step (loop only): without any, the rest is
     *                    computed at once
     */
    LocalPrefill(
            String workerId,
            Engine engine,
            KvBlockPool pool,
            WorkerExecutor compute,
            BlockCache kept,
            KvInbox inbox,
            Supplier<String> noRoom,
            int chunkTokens,
            BooleanSupplier decoding) {
        this.chunkTokens = chunkTokens;
        this.decoding = decoding;
        this.rate = Throughput.prefillTokens(engine.expectedPrefillTokensPerSecond());
        this.workerId = workerId;
        this.engine = engine;
        this.pool = pool;
        this.compute = compute;
        this.kept = kept;
        this.inbox = inbox;
        this.noRoom = noRoom;
    }

    /** Prompts being prefilled here. */
    int running() {
        return jobs.size();
    }

    int queuedTokens() {
        int queued = 0;
        for (Job job : jobs.values()) {
            queued += job.request.promptTokens().length;
        }
        return queued;
    }

    void onPrefill(Message<Object> message) {
        PrefillRequest request = WorkerMessages.decodeOrFail(message, PrefillRequest.CODEC);
        if (request == null) {
            return;
        }
        String invalid = invalid(request);
        if (invalid != null) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), invalid);
            return;
        }
        String full = noRoom.get();
        if (full != null) {
            message.fail(WorkerFailure.OVER_CAPACITY.code(), full);
            return;
        }
        // KV an older attempt of the request left here is dead: the router moved it here again.
        inbox.drop(request.requestId());
        Job job = new Job(request);
        jobs.put(request.requestId(), job);
        nextChunk(job, message);
    }

    /**
     * Computes the job's next chunk on the compute thread; decode steps handed to it meanwhile run before
     * the chunk after. Loop only.
     */
    private void nextChunk(Job job, Message<Object> message) {
        PrefillRequest request = job.request;
        // No sequence to hold up: the rest at once, as fast as a prefill worker would.
        int chunk = decoding.getAsBoolean() ? chunkTokens : Integer.MAX_VALUE;
        compute.<PromptPrefill.Prefilled>executeBlocking(() -> job.prefill.next(chunk), false)
                .onComplete(ar -> {
                    if (ar.succeeded() && ar.result() == null && !job.cancelled) {
                        nextChunk(job, message);
                        return;
                    }
                    jobs.remove(request.requestId());
                    if (ar.succeeded() && !job.cancelled) {
                        PromptPrefill.Prefilled p = ar.result();
                        rate.record(
                                request.promptTokens().length - p.cachedTokens(),
                                System.nanoTime() - job.prefill.startNanos());
                        if (!inbox.park(request.requestId(), request.attempt(), p.cache(), request.promptTokens())) {
                            WorkerMessages.failCancelled(message, request.requestId());
                            return;
                        }
                        message.reply(PrefillDone.CODEC.encode(new PrefillDone(
                                request.requestId(),
                                p.firstToken(),
                                request.promptTokens().length,
                                0,
                                p.micros(),
                                p.cachedTokens())));
                    } else if (job.cancelled || ar.cause() instanceof CancellationException) {
                        if (ar.succeeded()) {
                            // Done, or abandoned between chunks: either way its blocks go back.
                            if (ar.result() != null) {
                                ar.result().cache().free();
                            } else {
                                job.prefill.free();
                            }
                        }
                        WorkerMessages.failCancelled(message, request.requestId());
                    } else if (ar.cause() instanceof IllegalArgumentException) {
                        message.fail(
                                WorkerFailure.BAD_REQUEST.code(), ar.cause().getMessage());
                    } else {
                        LOG.log(
                                Level.WARNING,
                                "local prefill of request " + request.requestId() + " failed",
                                ar.cause());
                        message.fail(WorkerFailure.INTERNAL.code(), "local prefill failed: " + ar.cause());
                    }
                });
    }

    /** Prompt tokens per second of local prefill, start to finish (decode steps between chunks included). */
    double tokensPerSecond() {
        return rate.perSecond();
    }

    void onCancel(Message<Object> message) {
        CancelMessages.decode(message).map(c -> jobs.get(c.requestId())).ifPresent(job -> job.cancelled = true);
    }

    /** Cancels what a departed router asked for. */
    void routerLeft(String routerNode) {
        jobs.values().stream()
                .filter(j -> routerNode.equals(j.request.routerNode()))
                .forEach(j -> j.cancelled = true);
    }

    private String invalid(PrefillRequest request) {
        if (!workerId.equals(request.decodeWorkerId())) {
            return "a decode worker prefills only for itself, not for " + request.decodeWorkerId();
        }
        if (jobs.containsKey(request.requestId())) {
            return "request " + request.requestId() + " is already prefilling here";
        }
        return PromptPrefill.invalid(engine, request.promptTokens());
    }
}
