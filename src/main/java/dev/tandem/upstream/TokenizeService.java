package dev.tandem.upstream;

import dev.tandem.engine.tokenizer.ChatTemplateException;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.engine.tokenizer.UpstreamTokenizer;
import dev.tandem.protocol.Addresses;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Tokenizing over the event bus for models served by upstream servers: a router's tokenizer asks any
 * worker of the model, which asks its upstream's {@code /tokenize}. The router needs no route to the
 * GPU servers (a worker may reach its own on localhost only), and any live worker will do.
 */
public final class TokenizeService {
    private static final long TIMEOUT_MS = 30_000;

    private TokenizeService() {}

    /** A worker's answer to tokenize requests for its model, from its upstream. */
    public static MessageConsumer<JsonObject> serve(Vertx vertx, UpstreamClient client, String model) {
        return vertx.eventBus().consumer(Addresses.tokenize(model), (Message<JsonObject> m) -> {
            JsonObject body = m.body();
            JsonObject chat = body.getJsonObject("chat");
            // A chat goes as vLLM's TokenizeChatRequest: the server applies its own template.
            JsonObject request = chat != null
                    ? chat.copy().put("model", model)
                    : new JsonObject()
                            .put("model", model)
                            .put("prompt", body.getString("text", ""))
                            .put("add_special_tokens", body.getBoolean("add_special_tokens", true));
            client.postJson("/tokenize", request)
                    .onSuccess(a -> m.reply(new JsonObject().put("tokens", a.getJsonArray("tokens", new JsonArray()))))
                    .onFailure(e ->
                            m.fail(e instanceof UpstreamException u && u.clientError() ? 400 : 500, e.getMessage()));
        });
    }

    /** A tokenizer from the cluster's store, rebound to tokenize through the model's workers. */
    public static Tokenizer onEventBus(Vertx vertx, Tokenizer tokenizer) {
        if (!(tokenizer instanceof UpstreamTokenizer t)) {
            return tokenizer;
        }
        return t.withEncoders(
                (model, text, addSpecial) ->
                        ask(vertx, model, new JsonObject().put("text", text).put("add_special_tokens", addSpecial)),
                (model, request) -> ask(vertx, model, new JsonObject().put("chat", new JsonObject(request))));
    }

    private static int[] ask(Vertx vertx, String model, JsonObject question) {
        try {
            JsonObject answer = vertx.eventBus()
                    .<JsonObject>request(
                            Addresses.tokenize(model), question, new DeliveryOptions().setSendTimeout(TIMEOUT_MS))
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(TIMEOUT_MS + 1_000, TimeUnit.MILLISECONDS)
                    .body();
            JsonArray ids = answer.getJsonArray("tokens");
            int[] out = new int[ids.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = ids.getInteger(i);
            }
            return out;
        } catch (ExecutionException e) {
            if (question.containsKey("chat") && e.getCause() instanceof ReplyException r && r.failureCode() == 400) {
                // The server's template refused the chat: the client's fault, as with our own templates.
                throw new ChatTemplateException(r.getMessage(), r);
            }
            throw new IllegalStateException(
                    "tokenizing for model '" + model + "' failed: "
                            + e.getCause().getMessage(),
                    e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("tokenizing for model '" + model + "' timed out", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while tokenizing", e);
        }
    }
}
