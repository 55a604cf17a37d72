package dev.tandem.api;

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
 * and a decode worker for it are registered, since only then can a request be served.
 */
final class ModelsHandler implements Handler<RoutingContext> {
  private final WorkerDirectory directory;
  private final long created = System.currentTimeMillis() / 1000;

  ModelsHandler(WorkerDirectory directory) {
    this.directory = directory;
  }

  @Override
  public void handle(RoutingContext ctx) {
    Set<String> prefill = models(WorkerRole.PREFILL);
    Set<String> served = models(WorkerRole.DECODE);
    served.retainAll(prefill);
    JsonArray data = new JsonArray();
    for (String id : served) {
      data.add(new JsonObject().put("id", id).put("object", "model").put("created", created).put("owned_by", "tandem"));
    }
    ctx.json(new JsonObject().put("object", "list").put("data", data));
  }

  private Set<String> models(WorkerRole role) {
    Set<String> out = new TreeSet<>();
    for (WorkerDescriptor w : directory.workers(role)) {
      out.add(w.model());
    }
    return out;
  }
}
