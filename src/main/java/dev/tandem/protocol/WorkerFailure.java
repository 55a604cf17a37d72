package dev.tandem.protocol;

import io.vertx.core.eventbus.ReplyException;

/**
 * Failure codes a worker answers with ({@code message.fail(code, text)}); the router maps them to
 * client errors or retries. Codes follow HTTP where one fits, so logs read naturally.
 */
public enum WorkerFailure {
    BAD_REQUEST(400),
    KV_MISSING(404),
    MODEL_MISMATCH(409),
    /** The worker left (its bridge connection closed) while the message waited for its answer. */
    GONE(410),
    KV_TOO_LARGE(413),
    /** A prefill worker whose queue is full: another worker, or later. */
    BUSY(429),
    CANCELLED(499),
    INTERNAL(500),
    KV_TRANSFER_FAILED(502),
    /** A decode worker with no room (KV memory or waiting sequences): another worker, or later. */
    OVER_CAPACITY(503);

    private final int code;

    WorkerFailure(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static WorkerFailure fromCode(int code) {
        for (WorkerFailure f : values()) {
            if (f.code == code) {
                return f;
            }
        }
        return INTERNAL;
    }

    /** The failure a reply carried, or null when the throwable is not a worker's answer (timeout, no handler). */
    public static WorkerFailure of(Throwable t) {
        if (t instanceof ReplyException re
                && re.failureType() == io.vertx.core.eventbus.ReplyFailure.RECIPIENT_FAILURE) {
            return fromCode(re.failureCode());
        }
        return null;
    }
}
