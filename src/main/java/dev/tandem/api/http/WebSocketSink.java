package dev.tandem.api.http;

import dev.tandem.api.ApiException;
import dev.tandem.api.ClientSink;
import dev.tandem.api.ErrorBodies;
import dev.tandem.router.GenerationFailure;
import dev.tandem.router.Usage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;

/**
 * Where tokens are sent to a WebSocket client: one request on a {@code /v1/stream} socket, as frames
 * tagged with the client's id. While the socket's write queue is full, token batches are merged into
 * one pending frame instead of queueing a frame each; the frame goes out when the queue drains or
 * before the last one.
 */
final class WebSocketSink extends ClientSink {
    private final WebSocketSession session;
    private final Object id;
    private final String key;
    private int[] heldIds = new int[0];
    private int heldCount;
    private final StringBuilder heldText = new StringBuilder();

    WebSocketSink(WebSocketSession session, Object id, String key) {
        this.session = session;
        this.id = id;
        this.key = key;
    }

    String key() {
        return key;
    }

    @Override
    protected void refused(ApiException e) {
        session.sendError(id, e);
    }

    @Override
    protected void accepted(long requestId, String prefillWorker, String decodeWorker) {
        session.send(frame("accepted")
                .put("request_id", Long.toString(requestId))
                .put("prefill_worker", prefillWorker)
                .put("decode_worker", decodeWorker));
    }

    @Override
    protected void tokens(int[] tokenIds, String text) {
        if (heldCount == 0 && heldText.length() == 0 && !session.writeQueueFull()) {
            session.send(tokens(tokenIds, tokenIds.length, text));
            return;
        }
        if (heldCount + tokenIds.length > heldIds.length) {
            heldIds = Arrays.copyOf(heldIds, Math.max(16, 2 * (heldCount + tokenIds.length)));
        }
        System.arraycopy(tokenIds, 0, heldIds, heldCount, tokenIds.length);
        heldCount += tokenIds.length;
        heldText.append(text);
        session.hold(this);
    }

    /** Sends the tokens held back while the socket was full, as one frame. */
    void flushHeld() {
        if (heldCount == 0 && heldText.length() == 0) {
            return;
        }
        session.send(tokens(heldIds, heldCount, heldText.toString()));
        heldIds = new int[0];
        heldCount = 0;
        heldText.setLength(0);
    }

    @Override
    protected void finished(String finishReason, Usage usage) {
        session.send(frame("done").put("finish_reason", finishReason).put("usage", usage.toJson()));
    }

    @Override
    protected void failed(GenerationFailure failure) {
        session.sendError(id, failure.status(), ErrorBodies.body(failure));
    }

    /** What it held goes out (a closed socket takes nothing), and the session forgets it. */
    @Override
    protected void released() {
        flushHeld();
        session.release(this);
    }

    private JsonObject frame(String type) {
        return new JsonObject().put("id", id).put("type", type);
    }

    private JsonObject tokens(int[] ids, int count, String text) {
        JsonArray array = new JsonArray();
        for (int i = 0; i < count; i++) {
            array.add(ids[i]);
        }
        return frame("tokens").put("text", text).put("token_ids", array);
    }
}
