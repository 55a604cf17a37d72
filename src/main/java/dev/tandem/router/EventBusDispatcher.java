package dev.tandem.router;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.tracing.TraceHeaders;
import io.opentelemetry.api.trace.Span;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonObject;

/** The {@link Dispatcher} of a router node: JSON messages to the workers' addresses, each with its deadline. */
public final class EventBusDispatcher implements Dispatcher {
    /** How long a moved request waits for its old decode worker to confirm the cancel before going on anyway. */
    static final long CANCEL_CONFIRM_TIMEOUT_MS = 1000;

    private final EventBus bus;
    private final DeliveryOptions prefillOptions;
    private final DeliveryOptions decodeStartOptions;
    private final DeliveryOptions cancelOptions =
            TraceHeaders.untraced(new DeliveryOptions().setSendTimeout(CANCEL_CONFIRM_TIMEOUT_MS));
    private final DeliveryOptions untraced = TraceHeaders.untraced(new DeliveryOptions());

    /**
     * @param prefillTimeoutMs     prefill and KV hand-over together
     * @param decodeStartTimeoutMs the decode worker's answer to DECODE_REQUEST (it joins its batch; no compute)
     */
    public EventBusDispatcher(EventBus bus, long prefillTimeoutMs, long decodeStartTimeoutMs) {
        this.bus = bus;
        this.prefillOptions = TraceHeaders.untraced(new DeliveryOptions().setSendTimeout(prefillTimeoutMs));
        this.decodeStartOptions = TraceHeaders.untraced(new DeliveryOptions().setSendTimeout(decodeStartTimeoutMs));
    }

    @Override
    public Future<PrefillDone> prefill(String prefillWorker, PrefillRequest request) {
        return prefill(prefillWorker, request, Span.getInvalid());
    }

    @Override
    public Future<PrefillDone> prefill(String prefillWorker, PrefillRequest request, Span span) {
        return bus.<JsonObject>request(
                        Addresses.prefill(prefillWorker),
                        PrefillRequest.CODEC.encode(request),
                        TraceHeaders.carrying(span, prefillOptions))
                .map(reply -> PrefillDone.CODEC.decode(reply.body()));
    }

    @Override
    public Future<Void> startDecode(String decodeWorker, DecodeRequest request) {
        return startDecode(decodeWorker, request, Span.getInvalid());
    }

    @Override
    public Future<Void> startDecode(String decodeWorker, DecodeRequest request, Span span) {
        return bus.request(
                        Addresses.decodeStart(decodeWorker),
                        DecodeRequest.CODEC.encode(request),
                        TraceHeaders.carrying(span, decodeStartOptions))
                .mapEmpty();
    }

    @Override
    public void cancelPrefill(String prefillWorker, CancelRequest cancel) {
        bus.send(Addresses.prefillCancel(prefillWorker), CancelRequest.CODEC.encode(cancel), untraced);
    }

    @Override
    public void cancelDecode(String decodeWorker, CancelRequest cancel) {
        bus.send(Addresses.decodeCancel(decodeWorker), CancelRequest.CODEC.encode(cancel), untraced);
    }

    @Override
    public Future<Void> cancelDecodeConfirmed(String decodeWorker, CancelRequest cancel) {
        return bus.request(Addresses.decodeCancel(decodeWorker), CancelRequest.CODEC.encode(cancel), cancelOptions)
                .<Void>mapEmpty()
                .otherwiseEmpty();
    }
}
