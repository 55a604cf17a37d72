package dev.tandem.upstream;

import io.vertx.core.Future;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Discovery's calls, asked up to three times: a call lost or unanswered while a worker starts must not
 * fail the start. A 4xx is the upstream's answer, never asked again.
 */
final class DiscoveryRetry {
    private static final Logger LOG = Logger.getLogger(DiscoveryRetry.class.getName());
    static final int ATTEMPTS = 3;

    private DiscoveryRetry() {}

    static <T> Future<T> call(UpstreamClient client, Supplier<Future<T>> call) {
        return attempt(client, call, 1);
    }

    private static <T> Future<T> attempt(UpstreamClient client, Supplier<Future<T>> call, int attempt) {
        return call.get().recover(e -> {
            if (!retryable(e) || attempt >= ATTEMPTS) {
                return Future.failedFuture(e);
            }
            LOG.warning("asking the upstream " + client.baseUrl() + " again (" + (attempt + 1) + " of " + ATTEMPTS
                    + "): " + e.getMessage());
            return attempt(client, call, attempt + 1);
        });
    }

    static boolean retryable(Throwable e) {
        return !(e instanceof UpstreamException u && u.clientError());
    }
}
