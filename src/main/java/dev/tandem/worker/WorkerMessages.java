package dev.tandem.worker;

import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.WorkerFailure;
import io.vertx.core.eventbus.Message;

/** Replies every worker, reference or upstream, gives alike, so routers read them the same way. */
public final class WorkerMessages {
    private WorkerMessages() {}

    /** The request in {@code message}, or null once the message was failed: one it cannot read is the sender's error. */
    public static <T> T decodeOrFail(Message<Object> message, JsonCodec<T> codec) {
        try {
            return codec.decode(JsonCodec.object(message.body()));
        } catch (ProtocolException e) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), e.getMessage());
            return null;
        }
    }

    public static void failCancelled(Message<?> message, long requestId) {
        message.fail(WorkerFailure.CANCELLED.code(), "request " + requestId + " was cancelled");
    }
}
