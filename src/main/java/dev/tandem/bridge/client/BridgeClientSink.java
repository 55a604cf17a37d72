package dev.tandem.bridge.client;

import dev.tandem.api.ApiException;
import dev.tandem.api.ClientSink;
import dev.tandem.api.ErrorBodies;
import dev.tandem.router.GenerationFailure;
import dev.tandem.router.Usage;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Where tokens are sent to a bridge client: answers its generate message with the request id once the
 * router has accepted it (or fails that reply when it is refused first), then pushes
 * {@code {id, text, token_ids}} to the client's {@code stream_to} address per token batch and ends with
 * {@code {id, finish_reason, usage}} or {@code {id, error}}. Runs on the router's event loop.
 */
final class BridgeClientSink extends ClientSink {
    /** Pushes never leave this node: the client is connected here, and no cluster lookup is needed per token. */
    private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);

    private final ClientRequests requests;
    private final EventBus eventBus;
    private final String streamTo;
    private final String connection;
    /** The generate message, until it is answered. */
    private Message<Object> request;

    private String id;

    BridgeClientSink(
            ClientRequests requests, EventBus eventBus, Message<Object> request, String streamTo, String connection) {
        this.requests = requests;
        this.eventBus = eventBus;
        this.request = request;
        this.streamTo = streamTo;
        this.connection = connection;
    }

    String id() {
        return id;
    }

    String streamTo() {
        return streamTo;
    }

    /** The bridge connection that started it, or null when it came from elsewhere on this node. */
    String connection() {
        return connection;
    }

    @Override
    protected void refused(ApiException e) {
        failBeforeStart(e.status(), ErrorBodies.body(e));
    }

    @Override
    protected void accepted(long requestId, String prefillWorker, String decodeWorker) {
        // A string: flake ids outgrow the integers JavaScript clients can hold.
        id = Long.toString(requestId);
        requests.accepted(this);
        if (request != null) {
            request.reply(new JsonObject()
                    .put("id", id)
                    .put("prefill_worker", prefillWorker)
                    .put("decode_worker", decodeWorker));
            request = null;
        }
    }

    @Override
    protected void tokens(int[] tokenIds, String text) {
        JsonArray ids = new JsonArray();
        for (int t : tokenIds) {
            ids.add(t);
        }
        push(new JsonObject().put("id", id).put("text", text).put("token_ids", ids));
    }

    @Override
    protected void finished(String finishReason, Usage usage) {
        push(new JsonObject().put("id", id).put("finish_reason", finishReason).put("usage", usage.toJson()));
    }

    @Override
    protected void failed(GenerationFailure failure) {
        if (id == null) {
            failBeforeStart(failure.status(), ErrorBodies.body(failure));
        } else {
            push(error(failure.status(), ErrorBodies.body(failure)));
        }
    }

    /** Nobody reads its tokens: a reply still owed is failed with {@code why}. */
    @Override
    protected void abandoned(String why) {
        if (request != null && request.replyAddress() != null) {
            request.fail(400, why);
        }
        request = null;
    }

    @Override
    protected void released() {
        requests.release(this);
    }

    /**
     * Refused before it had an id: the failed reply carries the status and message (Vert.x replies have
     * no room for more). A client that sent without a reply address gets an error frame with a null id.
     */
    private void failBeforeStart(int status, JsonObject errorBody) {
        if (request != null && request.replyAddress() != null) {
            request.fail(status, errorBody.getJsonObject("error").getString("message"));
        } else {
            push(error(status, errorBody));
        }
        request = null;
    }

    private void push(JsonObject frame) {
        eventBus.send(streamTo, frame, LOCAL);
    }

    private JsonObject error(int status, JsonObject errorBody) {
        return new JsonObject()
                .put("id", id)
                .put("error", errorBody.getJsonObject("error"))
                .put("status", status);
    }
}
