package dev.tandem.worker.upstream;

import dev.tandem.protocol.WorkerFailure;
import dev.tandem.upstream.UpstreamException;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import java.util.logging.Logger;

/**
 * How an upstream worker answers the router when its upstream failed: a 4xx is the client's error
 * (BAD_REQUEST, the upstream's message passed on: not retried); 5xx, refused or reset connections,
 * malformed answers and timeouts are this worker's failure (INTERNAL: the router retries on another
 * pair); a decode worker that refused or missed the hand-over passes its reason on.
 */
final class UpstreamFailures {
    private static final Logger LOG = Logger.getLogger(UpstreamFailures.class.getName());

    private UpstreamFailures() {}

    static void reply(Message<?> message, String phase, Throwable cause) {
        if (cause instanceof UpstreamException u && u.clientError()) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), u.getMessage());
        } else if (cause instanceof ReplyException re) {
            WorkerFailure f = WorkerFailure.of(re);
            message.fail(
                    (f == null ? WorkerFailure.KV_TRANSFER_FAILED : f).code(),
                    "KV handle hand-over failed: " + re.getMessage());
        } else {
            LOG.info("upstream " + phase + " failed: " + cause.getMessage());
            message.fail(WorkerFailure.INTERNAL.code(), "upstream " + phase + " failed: " + cause.getMessage());
        }
    }
}
