package dev.tandem.worker.engine;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.StopCondition;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.TokenBatch;
import dev.tandem.protocol.TokenEvent;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.tracing.Spans;
import dev.tandem.tracing.TraceHeaders;
import dev.tandem.worker.CancelMessages;
import dev.tandem.worker.WorkerMessages;
import dev.tandem.worker.kv.KvInbox;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A decode worker: receives KV from prefill workers, joins requests to a continuous batch, and streams
 * each step's tokens to the routers that own the requests — one message per router per step.
 */
public final class DecodeWorkerVerticle extends EngineWorkerVerticle {
    private static final Logger LOG = Logger.getLogger(DecodeWorkerVerticle.class.getName());

    private KvInbox inbox;
    private DecodeBatch batch;
    private long steps;
    private LocalPrefill localPrefill;

    public DecodeWorkerVerticle(String workerId, EngineWorkerSetup setup) {
        super(WorkerRole.DECODE, workerId, setup);
    }

    /** Finished sequences' full blocks are kept while kv-capacity-bytes has room (LRU, never a running one's). */
    @Override
    long cacheBytes() {
        return settings.kvCapacityBytes();
    }

    /** One thread: steps of one worker are sequential by nature; other workers use the other cores. */
    @Override
    int computeThreads() {
        return 1;
    }

    @Override
    int capacity() {
        return settings.maxBatch();
    }

    @Override
    List<MessageConsumer<?>> roleConsumers(EventBus bus) {
        inbox = new KvInbox(
                vertx,
                engine.kvLayout(),
                engine.info().fingerprint(),
                settings.maxKvTransferBytes(),
                settings.kvParkTimeoutMs(),
                (tokens, blocks) -> cache.lookup(tokens, blocks).blocks(),
                pool);
        batch = new DecodeBatch(engine, settings.maxBatch(), this::retire);
        metrics.kvInbox(inbox::parkedBytes, inbox::parkedCount, inbox::incomingBytes, inbox::incomingCount);
        localPrefill = new LocalPrefill(
                workerId,
                engine,
                pool,
                compute,
                cache,
                inbox,
                this::noRoom,
                settings.localPrefillChunkTokens(),
                () -> batch.activeCount() + batch.waitingCount() > 0);
        return List.of(
                bus.consumer(Addresses.decodeKv(workerId), this::onKvChunk),
                bus.<Object>consumer(Addresses.decodeStart(workerId), this::onDecodeRequest),
                bus.<Object>consumer(Addresses.decodeCancel(workerId), this::onCancel),
                bus.<Object>consumer(Addresses.prefill(workerId), localPrefill::onPrefill),
                bus.<Object>consumer(Addresses.prefillCancel(workerId), localPrefill::onCancel));
    }

    @Override
    WorkerLoad load() {
        return WorkerLoad.decode(
                        batch.activeCount() + batch.waitingCount(), usedBytes(), settings.kvCapacityBytes(), steps)
                .withLocalPrefill(localPrefill.queuedTokens(), localPrefill.running())
                .withPrefillRate(localPrefill.tokensPerSecond())
                .withKvInFlight(inbox.parkedCount(), inbox.incomingCount());
    }

    @Override
    boolean idle() {
        return batch.activeCount()
                        + batch.waitingCount()
                        + inbox.parkedCount()
                        + inbox.incomingCount()
                        + localPrefill.running()
                == 0;
    }

    /** KV memory running and parked requests hold; kept blocks are not counted: they give way to them. */
    private long usedBytes() {
        return batch.kvBytes() + inbox.parkedBytes() + inbox.incomingBytes();
    }

    /** The finished sequences' blocks kept here (tests). */
    BlockCache kept() {
        return cache;
    }

    /** A sequence ended with its KV intact: its full blocks are kept while there is room, the rest freed. */
    private void retire(DecodeSequence s) {
        int[] history = s.history();
        if (history != null) {
            int bs = engine.kvLayout().blockSize();
            cache.capacity(Math.max(0, settings.kvCapacityBytes() - usedBytes()));
            cache.store(history, PromptPrefill.fullBlocks(s.cache, Math.min(history.length, s.cache.length()) / bs));
        }
        s.cache.free();
    }

    private void onKvChunk(Message<Object> message) {
        // Asked only when a new transfer starts, not for every chunk.
        inbox.onChunk(
                message,
                (id, attempt) -> {
                    Integer decoding = batch.attemptOf(id);
                    if (decoding != null && attempt > decoding) {
                        batch.cancel(id); // the router moved the request here again: the older attempt is dead
                        return false;
                    }
                    return decoding != null;
                },
                this::noRoom);
    }

    /** Why this worker cannot take one more request's KV, or null when it can. */
    private String noRoom() {
        // Kept blocks give way first: only running and parked requests make the worker full.
        cache.capacity(Math.max(0, settings.kvCapacityBytes() - usedBytes()));
        String full = null;
        int sequences = batch.activeCount() + batch.waitingCount() + inbox.parkedCount() + inbox.incomingCount();
        int limit = settings.maxBatch() + settings.maxWaitingSequences();
        if (usedBytes() >= settings.kvCapacityBytes()) {
            full = "decode worker is full (kv-capacity-bytes reached)";
        } else if (sequences > limit) {
            full = "decode worker is full (" + limit + " sequences: max-batch + max-waiting-sequences)";
        }
        if (full != null) {
            metrics.refused();
        }
        return full;
    }

    /** The router on a cluster member that left will never read its tokens: drop its sequences and their KV. */
    @Override
    public void onRouterNodeLeft(String nodeId) {
        context.runOnContext(v -> {
            localPrefill.routerLeft(nodeId);
            List<Long> orphans = batch.requestsOf(nodeId);
            for (long id : orphans) {
                batch.cancel(id);
            }
            if (!orphans.isEmpty()) {
                LOG.info(() -> workerId + ": dropped " + orphans.size() + " sequences of a router on departed member "
                        + nodeId);
            }
        });
    }

    private void onDecodeRequest(Message<Object> message) {
        DecodeRequest request = WorkerMessages.decodeOrFail(message, DecodeRequest.CODEC);
        if (request == null) {
            return;
        }
        if (batch.attemptOf(request.requestId()) != null) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), "request " + request.requestId() + " is already decoding");
            return;
        }
        KvInbox.Claimed claimed = inbox.claim(request.requestId(), request.attempt());
        if (claimed == null) {
            message.fail(
                    WorkerFailure.KV_MISSING.code(),
                    "no KV for request " + request.requestId() + " (never arrived, or freed after "
                            + settings.kvParkTimeoutMs() + " ms)");
            return;
        }
        KvCache cache = claimed.cache();
        int seqLen = engine.info().config().seqLen();
        if (request.maxNewTokens() < 2
                || cache.length() + 1 >= seqLen
                || request.firstToken() < 0
                || request.firstToken() >= engine.info().config().vocabSize()) {
            cache.free();
            message.fail(WorkerFailure.BAD_REQUEST.code(), "nothing to decode for request " + request.requestId());
            return;
        }
        StopCondition stop = new StopCondition(
                engine.tokenizer(), request.stopTokens(), request.maxNewTokens(), cache.length(), seqLen);
        DecodeSequence sequence = new DecodeSequence(
                request.requestId(),
                request.routerId(),
                request.routerNode(),
                cache,
                EngineSampling.of(request.sampling()),
                stop,
                request.firstToken(),
                request.attempt(),
                claimed.tokens());
        // From joining the batch to leaving it: the decode of this request on this worker.
        sequence.span = Spans.start(tracer, "tandem.decode.sequence", TraceHeaders.parentOf(message));
        batch.join(sequence);
        message.reply(new JsonObject().put("request_id", request.requestId()).put("joined", true));
        stepIfIdle();
    }

    private void onCancel(Message<Object> message) {
        CancelMessages.decode(message).ifPresent(cancel -> {
            long id = cancel.requestId();
            inbox.drop(id, cancel);
            Integer attempt = batch.attemptOf(id);
            if (attempt != null && cancel.covers(attempt)) {
                batch.cancel(id);
            }
            // A router that moves a request waits for this before it dispatches again, maybe to this worker.
            if (message.replyAddress() != null) {
                message.reply(new JsonObject().put("request_id", id).put("cancelled", true));
            }
        });
    }

    private void stepIfIdle() {
        if (batch.stepping()) {
            return;
        }
        DecodeBatch.Step step = batch.begin();
        if (step == null) {
            return;
        }
        long start = System.nanoTime();
        compute.<DecodeBatch.StepResult>executeBlocking(() -> batch.compute(step), false)
                .onComplete(ar -> {
                    if (ar.failed()) {
                        failed(step, ar.cause());
                        // Let newly arrived requests and cancels in between steps, then go on.
                        vertx.runOnContext(v -> stepIfIdle());
                        return;
                    }
                    steps++;
                    metrics.decodeStep(
                            System.nanoTime() - start, step.sequences().size());
                    List<DecodeBatch.Outcome> outcomes = batch.complete(step, ar.result());
                    // The next step computes while this one's tokens are encoded and sent, so that work no
                    // longer adds to every step (vLLM's asynchronous output processing does the same).
                    // What arrived during the step has been handled on this loop already and joins it.
                    stepIfIdle();
                    publish(outcomes);
                });
    }

    private void failed(DecodeBatch.Step step, Throwable cause) {
        LOG.log(Level.WARNING, "decode step failed on " + workerId, cause);
        for (DecodeSequence s : batch.abort(step)) {
            send(
                    s.routerId,
                    List.of(new TokenEvent(
                            s.requestId, s.generated, new int[0], null, "decode step failed: " + cause.getMessage())));
        }
    }

    private void publish(List<DecodeBatch.Outcome> outcomes) {
        Map<String, List<TokenEvent>> byRouter = new HashMap<>();
        for (DecodeBatch.Outcome o : outcomes) {
            byRouter.computeIfAbsent(o.sequence().routerId, r -> new ArrayList<>())
                    .add(new TokenEvent(o.sequence().requestId, o.seq(), o.tokens(), o.finishReason(), null));
        }
        byRouter.forEach(this::send);
    }

    private void send(String routerId, List<TokenEvent> events) {
        vertx.eventBus()
                .send(Addresses.routerTokens(routerId), TokenBatch.CODEC.encode(new TokenBatch(workerId, events)));
    }

    public long steps() {
        return steps;
    }
}
