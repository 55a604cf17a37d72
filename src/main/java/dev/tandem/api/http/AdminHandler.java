package dev.tandem.api.http;

import dev.tandem.api.ApiException;
import dev.tandem.api.ErrorBodies;
import dev.tandem.cluster.WorkerDirectory;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.WorkerDescriptor;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * Operator endpoints: the registered workers, and drain — a draining worker finishes what it has and
 * receives nothing new ({@code POST /admin/workers/{id}/drain}, body {@code {"draining": false}} undoes it).
 */
final class AdminHandler {
    private final WorkerDirectory directory;

    AdminHandler(WorkerDirectory directory) {
        this.directory = directory;
    }

    void workers(RoutingContext ctx) {
        JsonArray out = new JsonArray();
        for (var role : dev.tandem.protocol.WorkerRole.values()) {
            for (WorkerDescriptor w : directory.workers(role)) {
                out.add(WorkerDescriptor.CODEC.encode(w));
            }
        }
        ctx.json(new JsonObject().put("workers", out));
    }

    void drain(RoutingContext ctx) {
        String id = ctx.pathParam("id");
        if (directory.get(id) == null) {
            ErrorResponses.send(
                    ctx.response(),
                    404,
                    ErrorBodies.body(
                            "no registered worker '" + id + "'", "invalid_request_error", "id", "worker_not_found"));
            return;
        }
        boolean draining = true;
        if (ctx.body() != null && ctx.body().length() > 0) {
            try {
                Object flag = JsonRequestBody.read(ctx).getValue("draining");
                if (flag != null && !(flag instanceof Boolean)) {
                    throw ApiException.invalidType("draining", "a boolean");
                }
                draining = !Boolean.FALSE.equals(flag);
            } catch (ApiException e) {
                ErrorResponses.send(ctx.response(), e);
                return;
            }
        }
        ctx.vertx()
                .eventBus()
                .<JsonObject>request(
                        Addresses.workerDrain(id),
                        new JsonObject().put("draining", draining),
                        new DeliveryOptions().setSendTimeout(5000))
                .onComplete(ar -> {
                    if (ar.succeeded()) {
                        ctx.json(ar.result().body());
                    } else {
                        ErrorResponses.send(
                                ctx.response(),
                                502,
                                ErrorBodies.body(
                                        "worker '" + id + "' did not answer: "
                                                + ar.cause().getMessage(),
                                        "server_error",
                                        null,
                                        "worker_failed"));
                    }
                });
    }
}
