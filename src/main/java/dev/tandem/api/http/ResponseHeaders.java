package dev.tandem.api.http;

import io.vertx.core.http.HttpServerResponse;

/** Headers that tell a client (and an operator reading logs) which request and workers served it. */
final class ResponseHeaders {
    static final String REQUEST_ID = "X-Tandem-Request-Id";
    static final String PREFILL_WORKER = "X-Tandem-Prefill-Worker";
    static final String DECODE_WORKER = "X-Tandem-Decode-Worker";

    private ResponseHeaders() {}

    static void put(HttpServerResponse response, long requestId, String prefillWorker, String decodeWorker) {
        response.putHeader(REQUEST_ID, Long.toString(requestId))
                .putHeader(PREFILL_WORKER, prefillWorker)
                .putHeader(DECODE_WORKER, decodeWorker);
    }
}
