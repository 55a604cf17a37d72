package dev.tandem.upstream;

import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.KvHandle;
import dev.tandem.protocol.PrefillRequest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.function.Function;

/**
 * vLLM's disaggregated serving, as its proxy runs it: the prefill instance gets the request with
 * {@code max_tokens: 1}, {@code stream: false} and {@code kv_transfer_params} asking for a remote
 * decode; the {@code kv_transfer_params} it answers with go to the decode instance with the original
 * request, streamed. Prompts go as token ids ({@code /v1/completions}), and the stream returns token
 * ids ({@code return_token_ids}, vLLM 0.10.2 and later).
 */
final class VllmFlow implements UpstreamFlow {
    static final String COMPLETIONS = "/v1/completions";

    static JsonObject prefillParams() {
        return new JsonObject()
                .put("do_remote_decode", true)
                .put("do_remote_prefill", false)
                .putNull("remote_engine_id")
                .putNull("remote_block_ids")
                .putNull("remote_host")
                .putNull("remote_port");
    }

    @Override
    public Future<Integer> prefill(
            UpstreamClient client,
            String model,
            PrefillRequest r,
            UpstreamClient.Cancel cancel,
            Function<JsonObject, Future<Void>> handOver) {
        JsonObject body = UpstreamFlow.sampling(
                        new JsonObject().put("model", model).put("prompt", ids(r.promptTokens())), r.sampling())
                .put("max_tokens", 1)
                .put("stream", false)
                .put("kv_transfer_params", prefillParams());
        return client.postJson(COMPLETIONS, body, cancel).compose(answer -> {
            JsonObject params = answer.getJsonObject("kv_transfer_params");
            if (params == null) {
                return Future.failedFuture(new UpstreamException(
                        0,
                        "the vLLM prefill instance answered without kv_transfer_params: is it started with"
                                + " --kv-transfer-config (a KV connector such as NixlConnector)?"));
            }
            int cached = answer.getJsonObject("usage", new JsonObject())
                    .getJsonObject("prompt_tokens_details", new JsonObject())
                    .getInteger("cached_tokens", 0);
            return handOver.apply(params).map(cached);
        });
    }

    @Override
    public String decodePath() {
        return COMPLETIONS;
    }

    @Override
    public JsonObject decodeBody(String model, KvHandle handle, DecodeRequest r) {
        return UpstreamFlow.sampling(
                        new JsonObject().put("model", model).put("prompt", ids(handle.promptTokens())), r.sampling())
                .put("max_tokens", r.maxNewTokens())
                .put("stream", true)
                .put("stream_options", new JsonObject().put("include_usage", true))
                .put("return_token_ids", true)
                .put("kv_transfer_params", handle.params().copy());
    }

    @Override
    public Chunk chunk(JsonObject event, int seen) {
        JsonArray choices = event.getJsonArray("choices");
        if (choices == null || choices.isEmpty()) {
            return new Chunk(new int[0], null); // the usage chunk
        }
        JsonObject choice = choices.getJsonObject(0);
        JsonArray ids = choice.getJsonArray("token_ids");
        if (ids == null) {
            throw new UpstreamException(
                    0, "a vLLM stream chunk without token_ids: vLLM 0.10.2 or later is needed (return_token_ids)");
        }
        return new Chunk(ints(ids), choice.getString("finish_reason"));
    }

    static JsonArray ids(int[] tokens) {
        JsonArray a = new JsonArray();
        for (int t : tokens) {
            a.add(t);
        }
        return a;
    }

    static int[] ints(JsonArray a) {
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.getInteger(i);
        }
        return out;
    }
}
