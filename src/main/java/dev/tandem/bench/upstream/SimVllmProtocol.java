package dev.tandem.bench.upstream;

import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** The JSON a sim vLLM instance reads and writes, in vLLM's shapes (the tests' fake servers answer with it too). */
public final class SimVllmProtocol {
    private SimVllmProtocol() {}

    /** The prompt as token ids: the only form the benchmark sends. */
    static int[] prompt(JsonObject body) {
        if (!(body.getValue("prompt") instanceof JsonArray ids) || ids.isEmpty()) {
            throw new IllegalArgumentException("prompt must be a non-empty array of token ids");
        }
        int[] out = new int[ids.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(ids.getValue(i) instanceof Number n)) {
                throw new IllegalArgumentException("prompt[" + i + "] is not a token id");
            }
            out[i] = n.intValue();
        }
        return out;
    }

    public static JsonArray ids(int[] ids) {
        JsonArray a = new JsonArray();
        for (int id : ids) {
            a.add(id);
        }
        return a;
    }

    /**
     * A prefill instance's answer: one token (discarded by the proxy), the usage with the cached
     * tokens, and the {@code kv_transfer_params} NixlConnector returns for the decode instance.
     */
    static JsonObject prefillAnswer(
            String model, int[] prompt, SimPrefillEngine.Done done, String engineId, int port, int blockSize) {
        JsonArray blockIds = new JsonArray();
        for (int b = 0; b < (prompt.length + blockSize - 1) / blockSize; b++) {
            blockIds.add(b);
        }
        return new JsonObject()
                .put("id", "cmpl-" + done.transferId())
                .put("object", "text_completion")
                .put("created", System.currentTimeMillis() / 1000)
                .put("model", model)
                .put(
                        "choices",
                        new JsonArray()
                                .add(new JsonObject()
                                        .put("index", 0)
                                        .put("text", " ")
                                        .put("finish_reason", "length")))
                .put("usage", usage(prompt.length, 1, done.cachedTokens()))
                .put(
                        "kv_transfer_params",
                        new JsonObject()
                                .put("do_remote_prefill", true)
                                .put("do_remote_decode", false)
                                .put("remote_block_ids", blockIds)
                                .put("remote_engine_id", engineId)
                                .put("remote_request_id", done.transferId())
                                .put("remote_host", "127.0.0.1")
                                .put("remote_port", port)
                                .put("tp_size", 1));
    }

    static JsonObject usage(int prompt, int completion, int cached) {
        return new JsonObject()
                .put("prompt_tokens", prompt)
                .put("completion_tokens", completion)
                .put("total_tokens", prompt + completion)
                .put("prompt_tokens_details", new JsonObject().put("cached_tokens", cached));
    }

    /** One streamed token, with {@code token_ids} as vLLM sends them when asked ({@code return_token_ids}). */
    static JsonObject chunk(String id, String model, int token, String finishReason) {
        JsonObject choice = new JsonObject()
                .put("index", 0)
                .put("text", String.valueOf((char) token))
                .put("token_ids", new JsonArray().add(token));
        if (finishReason == null) {
            choice.putNull("finish_reason");
        } else {
            choice.put("finish_reason", finishReason);
        }
        return new JsonObject()
                .put("id", id)
                .put("object", "text_completion")
                .put("created", System.currentTimeMillis() / 1000)
                .put("model", model)
                .put("choices", new JsonArray().add(choice));
    }

    /** {@code /v1/models} listing one model, in vLLM's shape ({@code max_model_len} is what Tandem reads). */
    public static JsonObject models(String id, String ownedBy, int maxModelLen) {
        return new JsonObject()
                .put("object", "list")
                .put(
                        "data",
                        new JsonArray()
                                .add(new JsonObject()
                                        .put("id", id)
                                        .put("object", "model")
                                        .put("owned_by", ownedBy)
                                        .put("root", id)
                                        .put("max_model_len", maxModelLen)));
    }

    /** vLLM's error body ({@code ErrorResponse}); SGLang answers the same shape. */
    public static void error(HttpServerResponse response, int status, String message) {
        json(
                response,
                status,
                new JsonObject()
                        .put("object", "error")
                        .put("message", message)
                        .put("type", status == 400 ? "BadRequestError" : "InternalServerError")
                        .putNull("param")
                        .put("code", status));
    }

    /** The body as JSON with {@code status}, unless the response has already ended or its connection closed. */
    public static void json(HttpServerResponse response, int status, JsonObject body) {
        if (!response.ended() && !response.closed()) {
            response.setStatusCode(status)
                    .putHeader("Content-Type", "application/json")
                    .end(body.encode());
        }
    }
}
