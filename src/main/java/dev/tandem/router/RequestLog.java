package dev.tandem.router;

import dev.tandem.logging.LogFields;
import java.util.logging.Level;
import java.util.logging.Logger;

/** A request's one line at its end: its summary, with its request id and trace id as fields for JSON logs. */
final class RequestLog {
    /** The lifecycle's logger, as before the line moved here: filters and alerts keyed on it keep working. */
    private static final Logger LOG = Logger.getLogger(RequestLifecycle.class.getName());

    private RequestLog() {}

    static void ended(ActiveRequest a, GenerationFailure failure, String cancelReason, long nowNanos) {
        if (!LOG.isLoggable(Level.INFO)) {
            return;
        }
        String outcome = failure != null
                ? "failed " + failure.status() + " " + failure.code()
                : cancelReason != null ? "cancelled (" + cancelReason + ")" : "ok " + a.stream.finishReason();
        String traceId = a.trace.traceId();
        String line = a.summary(outcome, nowNanos) + (traceId != null ? ", trace " + traceId : "");
        LOG.log(Level.INFO, line, new LogFields(a.id, traceId));
    }
}
