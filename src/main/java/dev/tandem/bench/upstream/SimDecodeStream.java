package dev.tandem.bench.upstream;

import io.vertx.core.Context;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicLong;

/** A decode instance's SSE answer: one event per token, the usage, then {@code [DONE]}. */
final class SimDecodeStream implements SimDecodeEngine.Sink {
    private static final AtomicLong IDS = new AtomicLong();

    private final Context context;
    private final HttpServerResponse response;
    private final String model;
    private final int promptTokens;
    private final String id = "cmpl-sim-" + IDS.incrementAndGet();
    private volatile boolean gone;
    private int generated;

    SimDecodeStream(Context context, HttpServerResponse response, String model, int promptTokens) {
        this.context = context;
        this.response = response;
        this.model = model;
        this.promptTokens = promptTokens;
        context.runOnContext(v -> {
            response.closeHandler(x -> gone = true);
            if (response.closed()) {
                gone = true;
                return;
            }
            response.setChunked(true)
                    .putHeader("Content-Type", "text/event-stream")
                    .putHeader("Cache-Control", "no-cache");
        });
    }

    @Override
    public void token(int token, boolean last) {
        generated++;
        int count = generated;
        context.runOnContext(v -> {
            if (gone || response.ended()) {
                return;
            }
            response.write("data: "
                    + SimVllmProtocol.chunk(id, model, token, last ? "length" : null)
                            .encode() + "\n\n");
            if (last) {
                JsonObject usage = new JsonObject()
                        .put("id", id)
                        .put("object", "text_completion")
                        .put("model", model)
                        .put("choices", new JsonArray())
                        .put("usage", SimVllmProtocol.usage(promptTokens, count, 0));
                response.write("data: " + usage.encode() + "\n\n");
                response.end("data: [DONE]\n\n");
            }
        });
    }

    @Override
    public boolean cancelled() {
        return gone;
    }
}
