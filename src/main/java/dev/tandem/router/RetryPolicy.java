package dev.tandem.router;

import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.WorkerFailure;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.Collection;
import java.util.List;

/**
 * What a worker's failure means for a request: try again elsewhere — and whom to avoid — or fail it,
 * and with what the client is told. Pure: failures in, decisions out.
 */
final class RetryPolicy {
    /** Dispatches one request may take (the first plus retries and failovers) before it fails. */
    static final int MAX_ATTEMPTS = 4;

    private RetryPolicy() {}

    /**
     * Either another attempt without the {@code avoid} workers ({@code forCapacity}: they turned the
     * request away for lack of room), or the request's end with {@code failure}.
     */
    record Decision(GenerationFailure failure, List<String> avoid, boolean forCapacity) {
        static Decision retry(List<String> avoid, boolean forCapacity) {
            return new Decision(null, avoid, forCapacity);
        }

        static Decision fail(GenerationFailure failure) {
            return new Decision(failure, List.of(), false);
        }

        boolean retries() {
            return failure == null;
        }
    }

    /**
     * A PREFILL_REQUEST failed. A decode worker that refused the KV for lack of room is the decode
     * worker's problem; a full prefill queue, no answer from the prefill address or a prefill worker that
     * left mid-prompt is the prefill worker's; anything else in the KV hand-over may be either's.
     */
    static Decision afterPrefill(Throwable cause, String prefillWorker, String decodeWorker) {
        if (!retryable(cause)) {
            return Decision.fail(toClient("prefill", cause));
        }
        WorkerFailure f = WorkerFailure.of(cause);
        boolean forCapacity = f == WorkerFailure.OVER_CAPACITY || f == WorkerFailure.BUSY;
        if (f == null || f == WorkerFailure.BUSY || f == WorkerFailure.GONE) {
            return Decision.retry(List.of(prefillWorker), forCapacity);
        }
        if (f == WorkerFailure.OVER_CAPACITY) {
            return Decision.retry(List.of(decodeWorker), true);
        }
        return Decision.retry(List.of(prefillWorker, decodeWorker), false);
    }

    /** A DECODE_REQUEST failed: another decode worker, or the request's end. */
    static Decision afterDecodeStart(Throwable cause, String decodeWorker) {
        return retryable(cause)
                ? Decision.retry(List.of(decodeWorker), false)
                : Decision.fail(toClient("decode", cause));
    }

    /**
     * No pair left to try ({@code missingRole} had nobody, or attempts ran out): overload (429, retry
     * later) when every worker given up on had turned the request away for lack of room, else an outage.
     */
    static GenerationFailure outOfWorkers(String missingRole, boolean onlyRefusedForCapacity) {
        return onlyRefusedForCapacity
                ? GenerationFailure.workersFull(missingRole)
                : GenerationFailure.noWorkers(missingRole);
    }

    static GenerationFailure outOfAttempts(Collection<String> failedWorkers, boolean onlyRefusedForCapacity) {
        return onlyRefusedForCapacity
                ? GenerationFailure.workersFull("available")
                : GenerationFailure.upstream(
                        "gave up after " + MAX_ATTEMPTS + " attempts; workers failed: " + failedWorkers);
    }

    /**
     * True when the failure is the worker's (gone, silent, broken, full) rather than the request's: a
     * bad request or a KV over the limit fails the same way everywhere and is not retried.
     */
    static boolean retryable(Throwable cause) {
        if (cause instanceof ReplyException re && re.failureType() != ReplyFailure.RECIPIENT_FAILURE) {
            return true; // timeout or no handler: the worker is gone or stuck
        }
        if (cause instanceof ProtocolException) {
            return true; // a malformed answer: that worker is broken, another may not be
        }
        WorkerFailure f = WorkerFailure.of(cause);
        return f == WorkerFailure.INTERNAL
                || f == WorkerFailure.GONE
                || f == WorkerFailure.KV_TRANSFER_FAILED
                || f == WorkerFailure.OVER_CAPACITY
                || f == WorkerFailure.BUSY
                || f == WorkerFailure.KV_MISSING;
    }

    /** The client-facing failure of a request a worker refused for the request's own sake. */
    static GenerationFailure toClient(String phase, Throwable cause) {
        WorkerFailure f = WorkerFailure.of(cause);
        if (f == WorkerFailure.BAD_REQUEST) {
            return GenerationFailure.invalid(cause.getMessage());
        }
        if (f == WorkerFailure.KV_TOO_LARGE) {
            return new GenerationFailure(
                    400, "invalid_request_error", "kv_transfer_limit_exceeded", cause.getMessage());
        }
        return GenerationFailure.upstream(phase + " failed: " + cause.getMessage());
    }
}
