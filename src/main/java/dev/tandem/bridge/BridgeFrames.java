package dev.tandem.bridge;

import io.vertx.core.AsyncResult;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The frames a bridge sends to its client, in the Vert.x TCP bridge's shapes so that existing
 * Vert.x bridge clients understand them: {@code message}, {@code err} and {@code pong}.
 */
public final class BridgeFrames {
    private BridgeFrames() {}

    /** 4-byte big-endian length, then the UTF-8 JSON. */
    public static Buffer encode(JsonObject frame) {
        byte[] json = frame.encode().getBytes(StandardCharsets.UTF_8);
        return Buffer.buffer(json.length + 4).appendInt(json.length).appendBytes(json);
    }

    /** A message delivered to an address the client registered, or the reply to one of its sends. */
    public static JsonObject message(String address, Object body, MultiMap headers, boolean send) {
        JsonObject frame =
                new JsonObject().put("type", "message").put("address", address).put("send", send);
        if (headers != null && !headers.isEmpty()) {
            JsonObject h = new JsonObject();
            for (Map.Entry<String, String> e : headers) {
                h.put(e.getKey(), e.getValue());
            }
            frame.put("headers", h);
        }
        return frame.put("body", body);
    }

    /**
     * A refused frame. {@code code} is the Vert.x bridge's word ({@code access_denied},
     * {@code unknown_type}, ...); {@code detail} says what was wrong for a human. When the refused
     * frame carried a {@code replyAddress} the error is addressed to it, so a client waiting for that
     * reply fails at once instead of timing out.
     */
    public static JsonObject err(String code, String detail, String replyAddress) {
        JsonObject frame = new JsonObject().put("type", "err");
        if (replyAddress != null) {
            frame.put("address", replyAddress);
        }
        return frame.put("message", code).put("detail", detail);
    }

    /** The answer to a client's send with a reply address: the reply as a message, or the failure. */
    public static JsonObject replyTo(String replyAddress, String sourceAddress, AsyncResult<Message<Object>> reply) {
        return reply.succeeded()
                ? message(replyAddress, reply.result().body(), reply.result().headers(), true)
                : failedReply(replyAddress, sourceAddress, reply.cause());
    }

    /** A send whose reply failed: the failure code (Tandem uses HTTP statuses) and message, as Vert.x reports it. */
    public static JsonObject failedReply(String replyAddress, String sourceAddress, Throwable cause) {
        JsonObject frame =
                new JsonObject().put("type", "err").put("address", replyAddress).put("sourceAddress", sourceAddress);
        if (cause instanceof ReplyException e) {
            return frame.put("failureCode", e.failureCode())
                    .put("failureType", e.failureType().name())
                    .put("message", e.getMessage());
        }
        return frame.put("failureCode", 500)
                .put("failureType", "RECIPIENT_FAILURE")
                .put("message", String.valueOf(cause));
    }

    public static JsonObject pong() {
        return new JsonObject().put("type", "pong");
    }
}
