package dev.tandem.protocol;

import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;

/**
 * KV_CACHE: one slice of a request's encoded KV (see {@link KvTransferCodec}). The body stays binary;
 * which request and which slice travel as message headers.
 */
public record KvChunk(long requestId, int index, boolean last, Buffer payload) {
  static final String REQUEST_ID = "tandem-request-id";
  static final String INDEX = "tandem-chunk";
  static final String LAST = "tandem-last";

  /** Headers for sending this chunk; the payload is the message body. */
  public DeliveryOptions deliveryOptions() {
    return new DeliveryOptions()
        .addHeader(REQUEST_ID, Long.toString(requestId))
        .addHeader(INDEX, Integer.toString(index))
        .addHeader(LAST, Boolean.toString(last));
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
      return new KvChunk(requestId, index, Boolean.parseBoolean(last), payload);
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
