package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The mix: repeatable from its seed, in the documented shares, within the model's context, sessions that carry on. */
class SoakMixTest {
    private static final int N = 4000;

    /** Draws {@code n} requests, ending each at once as a completed answer of {@code answer}. */
    private static List<SoakRequest> draw(long seed, int n, String answer) {
        SoakMix mix = new SoakMix(seed);
        List<SoakRequest> drawn = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            SoakRequest r = mix.next(i);
            drawn.add(r);
            mix.ended(r, SoakResult.completed(1, 2, answer));
        }
        return drawn;
    }

    private static String signature(SoakRequest r) {
        return r.kind() + " " + r.maxTokens() + " " + r.seed() + " " + r.cancelAfterChunks() + " "
                + (r.prompt() != null ? r.prompt() : r.messages().encode());
    }

    @Test
    void theSameSeedDrawsTheSameRequests() {
        List<String> a =
                draw(42, 300, "ok").stream().map(SoakMixTest::signature).toList();
        List<String> b =
                draw(42, 300, "ok").stream().map(SoakMixTest::signature).toList();
        List<String> c =
                draw(43, 300, "ok").stream().map(SoakMixTest::signature).toList();
        assertEquals(a, b);
        assertNotEquals(a, c);
    }

    @Test
    void everyKindInItsShareAndCancelsOnlyOnStreams() {
        Map<SoakKind, Integer> counts = new EnumMap<>(SoakKind.class);
        int streamed = 0;
        int cancels = 0;
        for (SoakRequest r : draw(7, N, "ok")) {
            counts.merge(r.kind(), 1, Integer::sum);
            streamed += r.kind().streamed ? 1 : 0;
            if (r.cancelAfterChunks() > 0) {
                cancels++;
                assertTrue(r.kind().streamed, "a JSON answer cannot be cancelled after its first tokens");
                assertTrue(r.cancelAfterChunks() <= 3);
            }
            assertTrue(r.maxTokens() >= 16 && r.maxTokens() <= 64, "max_tokens " + r.maxTokens());
        }
        for (SoakKind k : SoakKind.values()) {
            double share = counts.getOrDefault(k, 0) * 100.0 / N;
            assertEquals(SoakMix.WEIGHTS[k.ordinal()], share, 2.5, k + " share");
        }
        assertEquals(SoakMix.CANCEL_SHARE, cancels / (double) streamed, 0.03);
    }

    /**
     * Prompt + max_tokens fit the budget, for completions by their bytes + BOS, for chat by the rendered
     * conversation, even when every answer is as long as it can be (64 replacement characters, 3 bytes each).
     */
    @Test
    void everyRequestFitsTheBuiltInModelsContext() {
        String longest = "\uFFFD".repeat(64);
        for (SoakRequest r : draw(11, N, longest)) {
            int tokens = r.prompt() != null
                    ? r.prompt().getBytes(StandardCharsets.UTF_8).length + 1
                    : SoakSession.estimatedTokens(
                            r.messages().getJsonObject(0).getString("content"), turns(r.messages()));
            assertTrue(tokens + r.maxTokens() <= SoakMix.TOKEN_BUDGET, tokens + " + " + r.maxTokens());
        }
    }

    @Test
    void aSessionResendsItsConversationWithTheAnswersReceived() {
        SoakMix mix = new SoakMix(5);
        Map<String, JsonArray> lastTurn = new java.util.HashMap<>();
        int resent = 0;
        for (int i = 0; i < 2000; i++) {
            SoakRequest r = mix.next(i);
            if (r.session() == null) {
                mix.ended(r, SoakResult.completed(1, 2, "answer " + i));
                continue;
            }
            JsonArray sent = r.messages();
            assertEquals("system", sent.getJsonObject(0).getString("role"));
            assertEquals("user", sent.getJsonObject(sent.size() - 1).getString("role"));
            JsonArray before = lastTurn.get(r.session().user());
            if (before != null && sent.size() > 2) {
                // The earlier turn, then the answer it got, then this turn's message.
                assertEquals(before.getList(), sent.getList().subList(0, before.size()));
                assertEquals("assistant", sent.getJsonObject(before.size()).getString("role"));
                resent++;
            }
            lastTurn.put(r.session().user(), sent.copy());
            mix.ended(r, SoakResult.completed(1, 2, "answer " + i));
            JsonObject body = SoakMix.body(r, "m");
            assertEquals(r.session().user(), body.getString("user"));
        }
        assertTrue(resent > 50, "multi-turn sessions: " + resent);
    }

    @Test
    void aFailedOrCancelledTurnLeavesTheConversationAsItWas() {
        SoakSession s = new SoakSession("u", "sys");
        JsonArray first = s.turn("hello", 16, 480);
        s.ended(first, SoakResult.cancelled(3));
        assertFalse(s.busy());
        JsonArray second = s.turn("again", 16, 480);
        assertEquals(2, second.size(), "system and the new message only: " + second.encode());
    }

    @Test
    void bodiesSayWhatEachTransportNeeds() {
        List<SoakRequest> drawn = draw(3, 200, "ok");
        for (SoakRequest r : drawn) {
            JsonObject body = SoakMix.body(r, "tandem-builtin");
            assertEquals("tandem-builtin", body.getString("model"));
            assertEquals(r.kind().chat, body.containsKey("messages"));
            assertEquals(!r.kind().chat, body.containsKey("prompt"));
            if (r.kind().webSocket) {
                assertFalse(body.containsKey("stream"), "the WebSocket streams by default");
            } else {
                assertEquals(r.kind().streamed, body.getBoolean("stream"));
                assertEquals(
                        r.kind().streamed,
                        body.containsKey("stream_options"),
                        "SSE asks for usage: a stream without it was cut");
            }
        }
    }

    private static JsonArray turns(JsonArray messages) {
        JsonArray t = messages.copy();
        t.remove(0);
        return t;
    }
}
