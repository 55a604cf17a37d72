package dev.tandem.api.http;

import dev.tandem.api.ErrorBodies;
import dev.tandem.router.ServedModel;
import dev.tandem.router.ServedModels;
import io.vertx.core.Handler;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code GET /v1/models}: the models requests can be served by now — a model is listed once both a
 * prefill and a decode worker of it are registered and this router can tokenize for it — each with its
 * context length.
 */
final class ModelsHandler implements Handler<RoutingContext> {
    private final ServedModels models;
    private final long created = System.currentTimeMillis() / 1000;

    ModelsHandler(ServedModels models) {
        this.models = models;
    }

    @Override
    public void handle(RoutingContext ctx) {
        JsonArray data = new JsonArray();
        for (ServedModel m : models.listed()) {
            data.add(model(m));
        }
        ctx.json(new JsonObject().put("object", "list").put("data", data));
    }

    /** {@code GET /v1/models/:model}: one model, or 404 when it is not listed. */
    void one(RoutingContext ctx) {
        String id = ctx.pathParam("model");
        for (ServedModel m : models.listed()) {
            if (m.name().equals(id)) {
                ctx.json(model(m));
                return;
            }
        }
        ErrorResponses.send(
                ctx.response(),
                404,
                ErrorBodies.body(
                        "The model '" + id + "' does not exist", "invalid_request_error", "model", "model_not_found"));
    }

    private JsonObject model(ServedModel m) {
        return new JsonObject()
                .put("id", m.name())
                .put("object", "model")
                .put("created", created)
                .put("owned_by", "tandem")
                .put("context_length", m.contextLength())
                // which weights the name stands for (a GGUF file's, a checkpoint's): KV never crosses them
                .put("fingerprint", String.format("%016x", m.fingerprint()));
    }
}
