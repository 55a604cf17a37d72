package dev.tandem.protocol;

import dev.tandem.worker.kv.KvTransferCodec;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.tracing.TracingPolicy;

/**
 * KV_CACHE: one slice of a request's encoded KV (see {@link KvTransferCodec}). The body stays binary;
 * which request and which slice travel as message headers.
 */
public record KvChunk(long requestId, int index, boolean last, Buffer payload, int attempt) {
    static final String REQUEST_ID = "tandem-request-id";
    static final String ATTEMPT = "tandem-attempt";

    public KvChunk(long requestId, int index, boolean last, Buffer payload) {
        this(requestId, index, last, payload, 0);
    }

    static final String INDEX = "tandem-chunk";
    static final String LAST = "tandem-last";

    /** Headers for sending this chunk; the payload is the message body. */
    public DeliveryOptions deliveryOptions() {
        // Untraced by Vert.x: it would make a span per chunk; the sender puts the context on the first one.
        return new DeliveryOptions()
                .setTracingPolicy(TracingPolicy.IGNORE)
                .setCodecName(KvChunkCodec.NAME)
                .addHeader(REQUEST_ID, Long.toString(requestId))
                .addHeader(INDEX, Integer.toString(index))
                .addHeader(LAST, Boolean.toString(last))
                .addHeader(ATTEMPT, Integer.toString(attempt));
    }

    public static KvChunk fromMessage(MultiMap headers, Object body) {
        if (!(body instanceof Buffer payload)) {
            throw new ProtocolException("KV chunk body must be binary");
        }
        try {
            long requestId = Long.parseLong(require(headers, REQUEST_ID));
            int index = Integer.parseInt(require(headers, INDEX));
            String last = require(headers, LAST);
            if (index < 0 || !(last.equals("true") || last.equals("false"))) {
                throw new ProtocolException("KV chunk headers are malformed");
            }
            // Optional: senders that predate attempts (or other languages' workers) mean the first one.
            String attempt = headers.get(ATTEMPT);
            int a = attempt == null ? 0 : Integer.parseInt(attempt);
            if (a < 0) {
                throw new ProtocolException("KV chunk header '" + ATTEMPT + "' must be >= 0");
            }
            return new KvChunk(requestId, index, Boolean.parseBoolean(last), payload, a);
        } catch (NumberFormatException e) {
            throw new ProtocolException("KV chunk headers are malformed: " + e.getMessage());
        }
    }

    private static String require(MultiMap headers, String name) {
        String v = headers.get(name);
        if (v == null) {
            throw new ProtocolException("KV chunk header '" + name + "' is missing");
        }
        return v;
    }
}
