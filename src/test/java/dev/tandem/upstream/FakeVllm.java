package dev.tandem.upstream;

import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * How vLLM answers {@code /v1/completions} in a P/D deployment (NixlConnector): a prefill instance
 * answers a {@code do_remote_decode} request with one token and the {@code kv_transfer_params} a decode
 * instance needs; a decode instance streams the completion, with {@code token_ids} per chunk when asked
 * ({@code return_token_ids}), a usage chunk, and {@code [DONE]}.
 */
final class FakeVllm {
    static final String ENGINE_ID = "3f1c9a2e-5b7d-4e8f-9a0b-1c2d3e4f5a6b";

    private FakeVllm() {}

    static JsonObject prefillAnswerParams() {
        return new JsonObject()
                .put("do_remote_prefill", true)
                .put("do_remote_decode", false)
                .put("remote_block_ids", new JsonArray().add(17).add(18).add(19))
                .put("remote_engine_id", ENGINE_ID)
                .put("remote_host", "127.0.0.1")
                .put("remote_port", 5600)
                .put("tp_size", 1);
    }

    static void answer(FakeUpstream fake, HttpServerResponse response, JsonObject body) {
        JsonObject kv = body.getJsonObject("kv_transfer_params");
        int prompt = body.getJsonArray("prompt").size();
        if (fake.prefillMode) {
            if (kv == null
                    || !Boolean.TRUE.equals(kv.getBoolean("do_remote_decode"))
                    || body.getBoolean("stream", false)) {
                FakeUpstream.error(response, 400, "the fake prefill instance expects do_remote_decode, no stream");
                return;
            }
            FakeUpstream.json(
                    response,
                    200,
                    new JsonObject()
                            .put("id", "cmpl-prefill-1")
                            .put("object", "text_completion")
                            .put("created", 1764720000)
                            .put("model", FakeUpstream.MODEL)
                            .put(
                                    "choices",
                                    new JsonArray()
                                            .add(new JsonObject()
                                                    .put("index", 0)
                                                    .put("text", "P")
                                                    .putNull("logprobs")
                                                    .put("finish_reason", "length")
                                                    .putNull("stop_reason")))
                            .put(
                                    "usage",
                                    new JsonObject()
                                            .put("prompt_tokens", prompt)
                                            .put("total_tokens", prompt + 1)
                                            .put("completion_tokens", 1)
                                            .put("prompt_tokens_details", new JsonObject().put("cached_tokens", 0)))
                            .put("kv_transfer_params", prefillAnswerParams()));
            return;
        }
        if (kv == null || !Boolean.TRUE.equals(kv.getBoolean("do_remote_prefill"))) {
            FakeUpstream.error(response, 400, "the fake decode instance expects do_remote_prefill");
            return;
        }
        int[] tokens = fake.answerTokens(body.getInteger("max_tokens"));
        boolean cut = tokens.length < fake.encode(fake.answerText, false).length;
        List<String> events = new ArrayList<>();
        for (int i = 0; i < tokens.length; i++) {
            boolean last = i == tokens.length - 1;
            JsonObject choice = new JsonObject()
                    .put("index", 0)
                    .put("text", fake.decode(new int[] {tokens[i]}))
                    .putNull("logprobs")
                    .put("finish_reason", last ? (cut ? "length" : "stop") : null)
                    .putNull("stop_reason");
            if (body.getBoolean("return_token_ids", false)) {
                choice.put("token_ids", new JsonArray().add(tokens[i]));
            }
            events.add(chunk(new JsonArray().add(choice), null).encode());
        }
        events.add(chunk(
                        new JsonArray(),
                        new JsonObject()
                                .put("prompt_tokens", prompt)
                                .put("total_tokens", prompt + tokens.length)
                                .put("completion_tokens", tokens.length))
                .encode());
        fake.stream(response, events);
    }

    private static JsonObject chunk(JsonArray choices, JsonObject usage) {
        JsonObject c = new JsonObject()
                .put("id", "cmpl-decode-1")
                .put("object", "text_completion")
                .put("created", 1764720000)
                .put("model", FakeUpstream.MODEL)
                .put("choices", choices);
        return usage == null ? c : c.put("usage", usage);
    }
}
