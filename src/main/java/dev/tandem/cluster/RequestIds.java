package dev.tandem.cluster;

import io.vertx.core.Future;

/** Request ids unique across router replicas ({@link RequestIdSource}); completes on the router's event loop. */
@FunctionalInterface
public interface RequestIds {
    Future<Long> next();
}
