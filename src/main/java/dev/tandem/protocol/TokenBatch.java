package dev.tandem.protocol;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything one decode step produced for one router: one message per router per step, so the
 * message rate grows with steps, not with steps × streams.
 */
public record TokenBatch(String workerId, List<TokenEvent> events) {

    public static final JsonCodec<TokenBatch> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(TokenBatch b) {
            JsonArray events = new JsonArray(new ArrayList<>(b.events.size()));
            for (TokenEvent e : b.events) {
                events.add(TokenEvent.CODEC.encode(e));
            }
            return new JsonObject().put("worker", b.workerId).put("events", events);
        }

        @Override
        public TokenBatch decode(JsonObject json) {
            Object raw = json.getValue("events");
            if (!(raw instanceof JsonArray array)) {
                throw new ProtocolException("field 'events' must be an array");
            }
            List<TokenEvent> events = new ArrayList<>(array.size());
            for (Object e : array) {
                events.add(TokenEvent.CODEC.decode(JsonFields.object(e)));
            }
            return new TokenBatch(JsonFields.requiredString(json, "worker"), List.copyOf(events));
        }
    };
}
