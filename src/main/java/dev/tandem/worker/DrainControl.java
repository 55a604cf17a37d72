package dev.tandem.worker;

import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.WorkerFailure;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

/**
 * Drain for any worker: a draining worker stays registered (so its running requests keep their
 * route) but says so in the registry, and routers send it nothing new.
 */
final class DrainControl {
  private final WorkerAnnouncer announcer;
  private boolean draining;

  DrainControl(WorkerAnnouncer announcer) {
    this.announcer = announcer;
  }

  boolean draining() {
    return draining;
  }

  void onDrain(Message<Object> message, JsonObject status) {
    Object flag;
    try {
      flag = JsonCodec.object(message.body()).getValue("draining");
    } catch (ProtocolException e) {
      message.fail(WorkerFailure.BAD_REQUEST.code(), e.getMessage());
      return;
    }
    if (!(flag instanceof Boolean on)) {
      message.fail(WorkerFailure.BAD_REQUEST.code(), "field 'draining' must be a boolean");
      return;
    }
    draining = on;
    announcer.announceNow().onComplete(ar -> {
      if (ar.succeeded()) {
        message.reply(status.put("draining", on));
      } else {
        message.fail(WorkerFailure.INTERNAL.code(), "registry not updated: " + ar.cause().getMessage());
      }
    });
  }
}
