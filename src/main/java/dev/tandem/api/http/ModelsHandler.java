package dev.tandem.api.http;

import dev.tandem.api.ErrorBodies;
import dev.tandem.cluster.WorkerDirectory;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.Handler;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code GET /v1/models}: the models the live workers serve — a model is listed once both a prefill
 * and a decode worker for it are registered, since only then can a request be served — with its context
 * length when the workers' model cards say it.
 */
final class ModelsHandler implements Handler<RoutingContext> {
    private final WorkerDirectory directory;
    private final long created = System.currentTimeMillis() / 1000;

    ModelsHandler(WorkerDirectory directory) {
        this.directory = directory;
    }

    @Override
    public void handle(RoutingContext ctx) {
        JsonArray data = new JsonArray();
        for (String id : served()) {
            data.add(model(id));
        }
        ctx.json(new JsonObject().put("object", "list").put("data", data));
    }

    /** {@code GET /v1/models/:model}: one model, or 404 when no live workers serve it. */
    void one(RoutingContext ctx) {
        String id = ctx.pathParam("model");
        if (served().contains(id)) {
            ctx.json(model(id));
        } else {
            ErrorResponses.send(
                    ctx.response(),
                    404,
                    ErrorBodies.body(
                            "The model '" + id + "' does not exist",
                            "invalid_request_error",
                            "model",
                            "model_not_found"));
        }
    }

    private JsonObject model(String id) {
        JsonObject json = new JsonObject()
                .put("id", id)
                .put("object", "model")
                .put("created", created)
                .put("owned_by", "tandem");
        // From the workers' model cards (a bridged worker may announce none): the window requests must fit.
        int contextLength = 0;
        for (WorkerRole role : WorkerRole.values()) {
            for (WorkerDescriptor w : directory.workers(role)) {
                if (w.model().equals(id) && w.card() != null) {
                    contextLength = Math.max(contextLength, w.card().contextLength());
                }
            }
        }
        if (contextLength > 0) {
            json.put("context_length", contextLength);
        }
        return json;
    }

    private Set<String> served() {
        Set<String> served = models(WorkerRole.DECODE);
        served.retainAll(models(WorkerRole.PREFILL));
        return served;
    }

    private Set<String> models(WorkerRole role) {
        Set<String> out = new TreeSet<>();
        for (WorkerDescriptor w : directory.workers(role)) {
            out.add(w.model());
        }
        return out;
    }
}
