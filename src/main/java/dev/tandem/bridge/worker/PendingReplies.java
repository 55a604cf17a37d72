package dev.tandem.bridge.worker;

import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.WorkerFailure;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Event-bus messages handed to an external worker that await its answer, under the reply addresses
 * the bridge made up for them. Each is answered exactly once: by the worker, by the deadline, or
 * when the connection closes — so a router never waits on a worker that is gone. Event loop only.
 */
final class PendingReplies {
    /** A message awaiting its answer, and the shape a good answer has (null: any JSON object). */
    record Pending(Message<Object> message, JsonCodec<?> replyShape, long timerId) {}

    private final Vertx vertx;
    private final long timeoutMs;
    private final String workerName;
    private final Map<String, Pending> pending = new HashMap<>();
    private long next;

    PendingReplies(Vertx vertx, long timeoutMs, String workerName) {
        this.vertx = vertx;
        this.timeoutMs = timeoutMs;
        this.workerName = workerName;
    }

    /** Holds {@code message} until answered; returns the reply address the worker answers to. */
    String hold(Message<Object> message, JsonCodec<?> replyShape) {
        String address = dev.tandem.protocol.Addresses.BRIDGE_REPLY_PREFIX + next++;
        long timer = vertx.setTimer(timeoutMs, id -> {
            if (pending.remove(address) != null) {
                message.fail(
                        WorkerFailure.INTERNAL.code(),
                        workerName + " did not answer within " + timeoutMs + " ms (worker-bridge.reply-timeout-ms)");
            }
        });
        pending.put(address, new Pending(message, replyShape, timer));
        return address;
    }

    /** Why the worker's answer was refused: the err frame's code and detail. */
    record Refusal(String code, String detail) {}

    /**
     * The worker answers the message held at {@code address}: {@code body} for success, or
     * {@code failureCode} and {@code message} for a failure (a {@link WorkerFailure} code). A malformed
     * answer fails the message — the router moves on instead of choking on it — and is refused.
     *
     * @return null when the answer went through, else why it was refused
     */
    Refusal answer(String address, JsonObject frame) {
        Pending p = take(address);
        if (p == null) {
            return new Refusal(
                    "unknown_reply_address",
                    "nothing awaits an answer at '" + address + "' (answered already, or timed out)");
        }
        Object code = frame.getValue("failureCode");
        if (code != null) {
            if (!(code instanceof Integer c) || c < 0) {
                p.message().fail(WorkerFailure.INTERNAL.code(), "malformed failure from " + workerName);
                return new Refusal("invalid_frame", "'failureCode' must be a non-negative integer");
            }
            Object text = frame.getValue("message");
            p.message().fail(c, text instanceof String s ? s : "failed (" + c + ")");
            return null;
        }
        try {
            JsonObject json = JsonCodec.object(frame.getValue("body"));
            if (p.replyShape() != null) {
                p.replyShape().decode(json);
            }
            p.message().reply(json);
            return null;
        } catch (ProtocolException e) {
            p.message()
                    .fail(WorkerFailure.INTERNAL.code(), "malformed answer from " + workerName + ": " + e.getMessage());
            return new Refusal(
                    "invalid_body", "the answer to " + p.message().address() + " is malformed: " + e.getMessage());
        }
    }

    /** The message awaiting an answer at {@code address}, no longer pending; null if none does. */
    private Pending take(String address) {
        Pending p = pending.remove(address);
        if (p != null) {
            vertx.cancelTimer(p.timerId());
        }
        return p;
    }

    int size() {
        return pending.size();
    }

    /** Fails everything still waiting as {@link WorkerFailure#GONE}: the router goes to another worker at once. */
    void failAll(String why) {
        List<Pending> left = new ArrayList<>(pending.values());
        pending.clear();
        for (Pending p : left) {
            vertx.cancelTimer(p.timerId());
            p.message().fail(WorkerFailure.GONE.code(), why);
        }
    }
}
