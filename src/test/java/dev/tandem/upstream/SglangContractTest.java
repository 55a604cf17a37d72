package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.engine.tokenizer.ChatMessage;
import dev.tandem.engine.tokenizer.ChatTemplate;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Tandem in front of an SGLang P/D pair (fakes): both instances get the request with the same bootstrap
 * room — the prefill instance's bootstrap host and port and a fresh 63-bit room — at once (the fake
 * prefill instance answers only once the decode instance joined the room, as SGLang's does), and the
 * decode stream is the answer.
 */
class SglangContractTest extends UpstreamPairFixture {
    SglangContractTest() {
        super(FakeUpstream.Kind.SGLANG, "sglang");
    }

    private static JsonObject expected(JsonArray prompt, int seed, int maxNewTokens, boolean stream, JsonObject room) {
        return new JsonObject("{\"sampling_params\":{\"max_new_tokens\":" + maxNewTokens
                        + ",\"temperature\":0.0,\"top_p\":1.0,\"sampling_seed\":" + seed + "},\"stream\":" + stream
                        + ",\"bootstrap_host\":\"127.0.0.1\",\"bootstrap_port\":8998}")
                .put("input_ids", prompt)
                .put("bootstrap_room", room.getValue("bootstrap_room"));
    }

    /** The one request each instance received, with one room in both; returns the room. */
    private JsonObject checkPair(JsonArray prompt, int seed, int maxTokens) {
        assertEquals(1, prefill.received.size(), "prefill requests: " + prefill.received);
        assertEquals(1, decode.received.size(), "decode requests: " + decode.received);
        JsonObject room = prefill.received.get(0);
        long id = room.getLong("bootstrap_room");
        assertTrue(id >= 0, "a 63-bit room: " + id);
        assertEquals(expected(prompt, seed, 1, false, room), prefill.received.get(0));
        assertEquals(expected(prompt, seed, maxTokens, true, room), decode.received.get(0));
        return room;
    }

    @Test
    void aCompletionIsTheDecodeStreamWithOneRoomInBothRequests() {
        HttpResponse<String> r = complete(6, 5);
        assertEquals(200, r.statusCode(), r.body());
        int[] expected = FakeUpstream.answer(6);
        assertArrayEquals(expected, HttpTestClient.tokenIds(r));
        assertEquals(
                FakeVocabulary.decode(expected),
                new JsonObject(r.body())
                        .getJsonArray("choices")
                        .getJsonObject(0)
                        .getString("text"));
        JsonObject first = checkPair(prompt("The capital of France:"), 5, 6);

        forget();
        assertEquals(
                200,
                cluster.http
                        .post(
                                "/v1/completions",
                                new JsonObject()
                                        .put("model", FakeUpstream.MODEL)
                                        .put("prompt", "The capital of France:")
                                        .put("max_tokens", 6)
                                        .put("temperature", 0)
                                        .put("seed", 5)
                                        .encode())
                        .statusCode());
        JsonObject second = checkPair(prompt("The capital of France:"), 5, 6);
        assertNotEquals(first.getLong("bootstrap_room"), second.getLong("bootstrap_room"), "a fresh room per request");
    }

    @Test
    void aStreamedChatIsTheDecodeStream() {
        List<ChatMessage> messages = List.of(new ChatMessage("user", "And the capital of Italy?"));
        HttpResponse<String> r = chat("And the capital of Italy?", 32, 9);
        assertEquals(200, r.statusCode(), r.body());
        ChatStream chat = ChatStream.parse(r.body());
        assertEquals(FakeUpstream.ANSWER, chat.text());
        assertEquals("stop", chat.finishReason());
        checkPair(prompt(ChatTemplate.ROLE_TAGS.render(messages)), 9, 32);
    }
}
