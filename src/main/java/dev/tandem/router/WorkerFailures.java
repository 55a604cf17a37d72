package dev.tandem.router;

import dev.tandem.protocol.WorkerFailure;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

/** How the router reads a worker's failure: what the client is told, and whether another worker may succeed. */
final class WorkerFailures {
  private WorkerFailures() {
  }

  /** The client-facing failure. */
  static GenerationFailure toClient(String phase, Throwable cause) {
    WorkerFailure f = WorkerFailure.of(cause);
    if (f == WorkerFailure.BAD_REQUEST) {
      return GenerationFailure.invalid(cause.getMessage());
    }
    if (f == WorkerFailure.KV_TOO_LARGE) {
      return new GenerationFailure(400, "invalid_request_error", "kv_transfer_limit_exceeded", cause.getMessage());
    }
    return GenerationFailure.upstream(phase + " failed: " + cause.getMessage());
  }

  /**
   * True when the failure is the worker's (gone, silent, broken, full) rather than the request's: a
   * bad request or a KV over the limit fails the same way everywhere and is not retried.
   */
  static boolean retryable(Throwable cause) {
    if (cause instanceof ReplyException re && re.failureType() != ReplyFailure.RECIPIENT_FAILURE) {
      return true; // timeout or no handler: the worker is gone or stuck
    }
    WorkerFailure f = WorkerFailure.of(cause);
    return f == WorkerFailure.INTERNAL || f == WorkerFailure.GONE || f == WorkerFailure.KV_TRANSFER_FAILED || f == WorkerFailure.OVER_CAPACITY
        || f == WorkerFailure.BUSY || f == WorkerFailure.KV_MISSING;
  }

  /** True when a worker turned the request away for lack of room (its queue or memory is full). */
  static boolean capacity(Throwable cause) {
    WorkerFailure f = WorkerFailure.of(cause);
    return f == WorkerFailure.OVER_CAPACITY || f == WorkerFailure.BUSY;
  }

  /**
   * Which of the pair a failed prefill dispatch should avoid next time: a decode worker that refused
   * the KV for lack of room is the decode worker's problem; a full prefill queue, no answer from the
   * prefill address or a prefill worker that left mid-prompt is the prefill worker's; anything else in
   * the KV hand-over may be either's.
   */
  static java.util.List<String> toAvoid(Throwable cause, String prefillWorker, String decodeWorker) {
    if (cause instanceof ReplyException re && re.failureType() != ReplyFailure.RECIPIENT_FAILURE) {
      return java.util.List.of(prefillWorker);
    }
    if (WorkerFailure.of(cause) == WorkerFailure.OVER_CAPACITY) {
      return java.util.List.of(decodeWorker);
    }
    if (WorkerFailure.of(cause) == WorkerFailure.BUSY || WorkerFailure.of(cause) == WorkerFailure.GONE) {
      return java.util.List.of(prefillWorker);
    }
    return java.util.List.of(prefillWorker, decodeWorker);
  }
}
