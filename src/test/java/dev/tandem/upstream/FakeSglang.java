package dev.tandem.upstream;

import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * How SGLang answers {@code /generate} in a P/D deployment: both instances get the request with the
 * same {@code bootstrap_host}/{@code bootstrap_port}/{@code bootstrap_room}; the prefill instance
 * answers only once a decode instance has joined the room (so the two must run at once), and the
 * decode instance streams cumulative {@code output_ids} with {@code meta_info}.
 */
final class FakeSglang {
    private FakeSglang() {}

    static void answer(FakeUpstream fake, HttpServerResponse response, JsonObject body) {
        Long room = body.getLong("bootstrap_room");
        if (room == null || body.getString("bootstrap_host") == null || body.getInteger("bootstrap_port") == null) {
            FakeUpstream.error(response, 400, "the fake expects bootstrap_host, bootstrap_port and bootstrap_room");
            return;
        }
        int prompt = body.getJsonArray("input_ids").size();
        if (fake.prefillMode) {
            awaitRoom(fake, response, room, prompt, 0);
            return;
        }
        FakeUpstream.ROOMS.put(room, true);
        int max = body.getJsonObject("sampling_params").getInteger("max_new_tokens");
        int[] tokens = FakeUpstream.answer(max);
        boolean cut = tokens.length < FakeVocabulary.encode(FakeUpstream.ANSWER, false).length;
        List<String> events = new ArrayList<>();
        JsonArray soFar = new JsonArray();
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < tokens.length; i++) {
            soFar.add(tokens[i]);
            text.append(FakeVocabulary.piece(tokens[i]));
            boolean last = i == tokens.length - 1;
            Object finish = !last
                    ? null
                    : cut
                            ? new JsonObject().put("type", "length").put("length", tokens.length)
                            : new JsonObject().put("type", "stop").put("matched", 2);
            events.add(new JsonObject()
                    .put("text", text.toString())
                    .put("output_ids", soFar.copy())
                    .put(
                            "meta_info",
                            new JsonObject()
                                    .put("id", "9f8e7d6c5b4a")
                                    .put("finish_reason", finish)
                                    .put("prompt_tokens", prompt)
                                    .put("completion_tokens", i + 1)
                                    .put("cached_tokens", 0))
                    .put("index", 0)
                    .encode());
        }
        fake.stream(response, events);
    }

    private static void awaitRoom(FakeUpstream fake, HttpServerResponse response, long room, int prompt, int waited) {
        if (FakeUpstream.ROOMS.containsKey(room)) {
            FakeUpstream.json(
                    response,
                    200,
                    new JsonObject()
                            .put("text", "")
                            .put("output_ids", new JsonArray())
                            .put(
                                    "meta_info",
                                    new JsonObject()
                                            .put("id", "1a2b3c4d5e6f")
                                            .put(
                                                    "finish_reason",
                                                    new JsonObject()
                                                            .put("type", "length")
                                                            .put("length", 1))
                                            .put("prompt_tokens", prompt)
                                            .put("completion_tokens", 1)));
            return;
        }
        if (waited > 10_000) {
            FakeUpstream.error(response, 500, "KV transfer failed: no decode instance joined room " + room);
            return;
        }
        response.exceptionHandler(e -> {});
        fake.vertx().setTimer(5, t -> awaitRoom(fake, response, room, prompt, waited + 5));
    }
}
