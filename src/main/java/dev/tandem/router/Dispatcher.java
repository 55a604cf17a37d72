package dev.tandem.router;

import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import io.opentelemetry.api.trace.Span;
import io.vertx.core.Future;

/**
 * What the router says to workers about one request: the seed's PREFILL_REQUEST and DECODE_REQUEST,
 * and cancels. {@link EventBusDispatcher} sends them over the clustered event bus; unit tests of the
 * request core answer them by hand. A failed future carries the worker's failure as the event bus
 * reports it ({@link RetryPolicy} reads it).
 */
public interface Dispatcher {

    /** Has the prefill worker compute the prompt and ship its KV; completes with PREFILL_DONE once the KV is acknowledged. */
    Future<PrefillDone> prefill(String prefillWorker, PrefillRequest request);

    /** Has the decode worker join the request to its batch; completes once it has. Tokens come separately. */
    Future<Void> startDecode(String decodeWorker, DecodeRequest request);

    /** {@link #prefill}, carrying {@code span}'s trace context to the worker (those that trace override it). */
    default Future<PrefillDone> prefill(String prefillWorker, PrefillRequest request, Span span) {
        return prefill(prefillWorker, request);
    }

    /** {@link #startDecode}, carrying {@code span}'s trace context to the worker. */
    default Future<Void> startDecode(String decodeWorker, DecodeRequest request, Span span) {
        return startDecode(decodeWorker, request);
    }

    /** Tells a prefill worker to drop the request; nothing comes back. */
    void cancelPrefill(String prefillWorker, CancelRequest cancel);

    /** Tells a decode worker to drop the request (its KV and batch slot); nothing comes back. */
    void cancelDecode(String decodeWorker, CancelRequest cancel);

    /**
     * Tells a decode worker to drop the request and completes once it confirmed, or did not answer in
     * time — never fails: the caller goes on either way.
     */
    Future<Void> cancelDecodeConfirmed(String decodeWorker, CancelRequest cancel);
}
