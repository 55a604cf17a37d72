package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.engine.tokenizer.ChatMessage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Tandem in front of a vLLM P/D pair (fakes): a completion and a chat request produce the decode
 * instance's tokens, and each instance received exactly the request vLLM's disaggregation proxy sends —
 * the prefill with {@code max_tokens: 1}, no stream and {@code do_remote_decode}; the decode with the
 * prefill's {@code kv_transfer_params}, streamed.
 */
class VllmContractTest extends UpstreamPairFixture {
    VllmContractTest() {
        super(FakeUpstream.Kind.VLLM, "vllm");
    }

    static JsonObject expectedPrefill(JsonArray prompt, int seed) {
        return new JsonObject("{\"model\":\"fake-llama\",\"temperature\":0.0,\"top_p\":1.0,\"seed\":" + seed
                        + ",\"max_tokens\":1,\"stream\":false,\"kv_transfer_params\":{\"do_remote_decode\":true,"
                        + "\"do_remote_prefill\":false,\"remote_engine_id\":null,\"remote_block_ids\":null,"
                        + "\"remote_host\":null,\"remote_port\":null}}")
                .put("prompt", prompt);
    }

    static JsonObject expectedDecode(JsonArray prompt, int seed, int maxTokens) {
        return new JsonObject("{\"model\":\"fake-llama\",\"temperature\":0.0,\"top_p\":1.0,\"seed\":" + seed
                        + ",\"max_tokens\":" + maxTokens
                        + ",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
                        + "\"return_token_ids\":true}")
                .put("prompt", prompt)
                .put("kv_transfer_params", FakeVllm.prefillAnswerParams());
    }

    @Test
    void aCompletionIsTheDecodeInstancesTokensAfterTheProxysTwoRequests() {
        HttpResponse<String> r = complete(5, 7);
        assertEquals(200, r.statusCode(), r.body());
        int[] expected = FakeUpstream.answer(5);
        assertArrayEquals(expected, HttpTestClient.tokenIds(r));
        JsonObject choice = new JsonObject(r.body()).getJsonArray("choices").getJsonObject(0);
        assertEquals(FakeVocabulary.decode(expected), choice.getString("text"));
        assertEquals("length", choice.getString("finish_reason"));

        JsonArray prompt = prompt("The capital of France:");
        assertEquals(List.of(expectedPrefill(prompt, 7)), prefill.received);
        assertEquals(List.of(expectedDecode(prompt, 7, 5)), decode.received);
    }

    @Test
    void aStreamedChatIsTheDecodeInstancesTokens() {
        List<ChatMessage> messages = List.of(new ChatMessage("user", "What is the capital of France?"));
        HttpResponse<String> r = chat("What is the capital of France?", 64, 11);
        assertEquals(200, r.statusCode(), r.body());
        ChatStream chat = ChatStream.parse(r.body());
        assertEquals(FakeUpstream.ANSWER, chat.text());
        assertEquals("stop", chat.finishReason());

        // vLLM applied the model's own template: /tokenize with messages (TokenizeChatRequest).
        JsonArray sent = new JsonArray()
                .add(new JsonObject()
                        .put("role", "user")
                        .put("content", messages.get(0).content()));
        JsonArray prompt = prompt(FakeUpstream.renderChat(sent, true));
        int all = FakeVocabulary.encode(FakeUpstream.ANSWER, false).length;
        assertEquals(List.of(expectedPrefill(prompt, 11)), prefill.received);
        assertEquals(List.of(expectedDecode(prompt, 11, 64)), decode.received);
        assertEquals(FakeUpstream.answer(all).length, chat.chunks());
    }

    @Test
    void aChatIsTokenizedByVllmsOwnTemplateAndItsRefusalIsA400() {
        HttpResponse<String> r = chat("What is the capital of France?", 4, 3);
        assertEquals(200, r.statusCode(), r.body());
        // Any worker of the model answers the router's tokenize request, through its own vLLM.
        List<JsonObject> asks = new java.util.ArrayList<>(prefill.chatTokenizeRequests);
        asks.addAll(decode.chatTokenizeRequests);
        assertTrue(!asks.isEmpty(), "no /tokenize with messages");
        JsonObject asked = asks.get(asks.size() - 1);
        assertEquals(FakeUpstream.MODEL, asked.getString("model"));
        assertEquals(true, asked.getBoolean("add_generation_prompt"));
        assertEquals(false, asked.getBoolean("add_special_tokens"));
        assertEquals("user", asked.getJsonArray("messages").getJsonObject(0).getString("role"));

        HttpResponse<String> refused = cluster.http.post(
                "/v1/chat/completions",
                new JsonObject()
                        .put("model", FakeUpstream.MODEL)
                        .put(
                                "messages",
                                new JsonArray()
                                        .add(new JsonObject()
                                                .put("role", "user")
                                                .put("content", "a"))
                                        .add(new JsonObject()
                                                .put("role", "user")
                                                .put("content", "b")))
                        .encode());
        assertEquals(400, refused.statusCode(), refused.body());
        JsonObject error = new JsonObject(refused.body()).getJsonObject("error");
        assertEquals("invalid_request_error", error.getString("type"));
        assertTrue(error.getString("message").contains("Conversation roles must alternate"), error.encode());
    }

    @Test
    void theRouterTokenizesThroughTheWorkersNotTheUpstreamsAddress() {
        // As in a pod: the URL a worker knows its upstream by (localhost) means nothing on the router.
        byte[][] pieces = new byte[FakeVocabulary.SIZE][];
        for (int i = 0; i < pieces.length; i++) {
            pieces[i] = FakeVocabulary.piece(i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
        var unreachable =
                new dev.tandem.engine.tokenizer.UpstreamTokenizer("http://127.0.0.1:9", FakeUpstream.MODEL, pieces, 0);
        var tokenizer = TokenizeService.onEventBus(cluster.router.vertx(), unreachable);
        assertArrayEquals(
                FakeVocabulary.encode("Where the river and", true), tokenizer.encode("Where the river and", true));
    }
}
