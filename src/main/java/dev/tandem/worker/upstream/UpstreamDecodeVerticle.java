package dev.tandem.worker.upstream;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.KvHandle;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.upstream.UpstreamLoad;
import dev.tandem.worker.CancelMessages;
import dev.tandem.worker.WorkerMessages;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A decode worker of engine {@code openai}: parks the {@link KvHandle} a prefill worker hands over, and
 * on DECODE_REQUEST streams the request from its upstream GPU server (vLLM or SGLang in decode mode),
 * relaying the stream's token ids to the router. The DECODE_REQUEST is answered once the upstream has
 * answered the stream's headers: a 4xx there is the client's error, passed through.
 *
 * <p>A stream that fails mid-way (5xx, reset, malformed SSE, silent past {@code upstream-timeout-ms})
 * ends with an error event: the router fails the request over as for any decode worker, re-prefilling
 * prompt + tokens sent on another pair. The upstream's own stream is not replayed.
 */
public final class UpstreamDecodeVerticle extends UpstreamWorkerBase {

    private record Parked(KvHandle handle, long timer) {}

    private final Map<Long, Parked> parked = new HashMap<>();
    private final Map<Long, UpstreamStream> streams = new HashMap<>();
    /** Stream events relayed: the progress routers watch to tell a busy worker from a stuck one. */
    private long relayed;

    public UpstreamDecodeVerticle(String workerId, UpstreamWorkerSetup setup) {
        super(workerId, setup);
    }

    @Override
    List<MessageConsumer<?>> roleConsumers(EventBus bus) {
        return List.of(
                bus.<Object>consumer(Addresses.decodeKvHandle(workerId), this::onHandle),
                bus.<Object>consumer(Addresses.decodeStart(workerId), this::onDecodeRequest),
                bus.<Object>consumer(Addresses.decodeCancel(workerId), this::onCancel));
    }

    @Override
    void cancelAll() {
        List.copyOf(streams.values()).forEach(s -> s.cancel());
        parked.values().forEach(p -> vertx.cancelTimer(p.timer()));
    }

    /**
     * This worker as it is now. Its load is the upstream's: running and waiting requests as sequences
     * (at least the streams this worker holds), KV use as a share of {@code worker.kv-capacity-bytes}.
     */
    @Override
    public WorkerDescriptor descriptor() {
        UpstreamLoad load = monitor.load();
        long capacity = settings.kvCapacityBytes();
        WorkerLoad workerLoad = WorkerLoad.decode(
                        Math.max(streams.size(), load.running() + load.waiting()),
                        Math.round(load.kvUsage() * capacity),
                        capacity,
                        relayed)
                .withKvInFlight(parked.size(), 0);
        return descriptor(WorkerRole.DECODE, settings.maxBatch(), workerLoad);
    }

    /** Drains before a shutdown: no new requests, waits (up to the timeout) for the streams it holds. */
    public Future<Void> drainForShutdown(long timeoutMs) {
        return drain(streams::isEmpty, timeoutMs);
    }

    /** Nobody reads the streams of a router whose cluster member left: close them. */
    public void onRouterNodeLeft(String nodeId) {
        context.runOnContext(v -> List.copyOf(streams.values()).stream()
                .filter(s -> nodeId.equals(s.request().routerNode()))
                .forEach(UpstreamStream::cancel));
    }

    private void onHandle(Message<Object> message) {
        KvHandle handle = WorkerMessages.decodeOrFail(message, KvHandle.CODEC);
        if (handle == null) {
            return;
        }
        long id = handle.requestId();
        Parked old = parked.remove(id);
        if (old != null) {
            vertx.cancelTimer(old.timer());
        }
        // Unclaimed handles go: the upstream frees its side of the transfer on its own timeout.
        long timer = vertx.setTimer(settings.kvParkTimeoutMs(), t -> parked.remove(id));
        parked.put(id, new Parked(handle, timer));
        message.reply(new JsonObject().put("request_id", id));
    }

    private void onDecodeRequest(Message<Object> message) {
        DecodeRequest request = WorkerMessages.decodeOrFail(message, DecodeRequest.CODEC);
        if (request == null) {
            return;
        }
        Parked p = parked.get(request.requestId());
        if (p == null || p.handle().attempt() != request.attempt()) {
            message.fail(WorkerFailure.KV_MISSING.code(), "no KV handle for request " + request.requestId() + " here");
            return;
        }
        parked.remove(request.requestId());
        vertx.cancelTimer(p.timer());
        UpstreamStream stream = new UpstreamStream(request, flow, this::send, this::ended);
        streams.put(request.requestId(), stream);
        stream.open(client, flow.decodePath(), flow.decodeBody(model.name(), p.handle(), request))
                .onComplete(ar -> {
                    if (ar.succeeded()) {
                        message.reply(new JsonObject()
                                .put("request_id", request.requestId())
                                .put("decoding", true));
                    } else if (stream.cancelled()) {
                        WorkerMessages.failCancelled(message, request.requestId());
                    } else {
                        UpstreamFailures.reply(message, "decode", ar.cause());
                    }
                });
    }

    private void send(String routerId, dev.tandem.protocol.TokenEvent event) {
        relayed++;
        vertx.eventBus()
                .send(
                        Addresses.routerTokens(routerId),
                        dev.tandem.protocol.TokenBatch.CODEC.encode(
                                new dev.tandem.protocol.TokenBatch(workerId, List.of(event))));
    }

    private void ended(UpstreamStream stream) {
        streams.remove(stream.request().requestId(), stream);
    }

    private void onCancel(Message<Object> message) {
        CancelMessages.decode(message).ifPresent(cancel -> {
            long id = cancel.requestId();
            Parked p = parked.get(id);
            if (p != null && cancel.covers(p.handle().attempt())) {
                parked.remove(id);
                vertx.cancelTimer(p.timer());
            }
            UpstreamStream s = streams.get(id);
            if (s != null && cancel.covers(s.request().attempt())) {
                s.cancel();
            }
            if (message.replyAddress() != null) {
                message.reply(new JsonObject().put("request_id", id).put("cancelled", true));
            }
        });
    }
}
