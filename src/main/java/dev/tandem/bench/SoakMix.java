package dev.tandem.bench;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The soak's traffic, drawn from one seed so two runs send the same requests in the same order: the
 * transport (SSE or JSON completions and chat, the WebSocket), max_tokens, the sampling seed, whether the
 * client cancels a stream after its first chunks, and the prompt. Completion prompts are one of
 * {@link #PREFIXES} shared documents plus a varying question, so prefix caches have something to reuse;
 * chat requests are turns of {@link #SESSIONS} multi-turn sessions ({@link SoakSession}). Only the
 * answers resent in a session's later turns come from the target.
 */
final class SoakMix {
    static final int PREFIXES = 32;
    static final int SESSIONS = 48;
    /**
     * Prompt + max_tokens at most, in tokens: the built-in model has a 512-token context and a byte-level
     * tokenizer (a token per byte + BOS); the rest is room for chat tags.
     */
    static final int TOKEN_BUDGET = 480;
    /** Shares of the transports, in {@link SoakKind} order: percent. */
    static final int[] WEIGHTS = {25, 15, 20, 10, 15, 15};
    /** Streams (SSE and WebSocket) the client cancels after 1 to 3 chunks with text. */
    static final double CANCEL_SHARE = 0.15;

    private static final String[] SYLLABLES = {
        "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "zen", "dar", "pel", "qui", "bo", "fa", "gri", "hu"
    };

    private final Random random;
    private final List<String> prefixes = new ArrayList<>();
    private final List<SoakSession> sessions = new ArrayList<>();

    SoakMix(long seed) {
        random = new Random(seed);
        for (int i = 0; i < PREFIXES; i++) {
            // 96 to 256 bytes: long enough to fill several 16-token KV blocks, short enough for a few chat turns.
            prefixes.add(words("Document " + i + ". ", 96 + random.nextInt(161)));
        }
        for (int i = 0; i < SESSIONS; i++) {
            sessions.add(new SoakSession("soak-user-" + i, prefixes.get(random.nextInt(PREFIXES))));
        }
    }

    SoakRequest next(long index) {
        SoakKind kind = SoakKind.values()[weighted()];
        int maxTokens = 16 + random.nextInt(49);
        long seed = random.nextLong();
        int cancelAfter = kind.streamed && random.nextDouble() < CANCEL_SHARE ? 1 + random.nextInt(3) : 0;
        if (!kind.chat) {
            String prompt = prefixes.get(random.nextInt(PREFIXES)) + "\nQuestion: " + words("", 8 + random.nextInt(41))
                    + "\nAnswer:";
            return new SoakRequest(index, kind, maxTokens, seed, cancelAfter, prompt, null, null);
        }
        SoakSession session = idleFrom(random.nextInt(SESSIONS));
        String message = words("", 10 + random.nextInt(31));
        return new SoakRequest(
                index,
                kind,
                maxTokens,
                seed,
                cancelAfter,
                null,
                session.turn(message, maxTokens, TOKEN_BUDGET),
                session);
    }

    /** A request ended: its session, if any, takes the answer. */
    void ended(SoakRequest r, SoakResult result) {
        if (r.session() != null) {
            r.session().ended(r.messages(), result);
        }
    }

    /**
     * The request body. Over the WebSocket {@code stream} is implied and the {@code id} is the socket's to
     * add; SSE asks for the usage chunk, which tells a complete stream from a cut one.
     */
    static JsonObject body(SoakRequest r, String model) {
        JsonObject body = new JsonObject()
                .put("model", model)
                .put("max_tokens", r.maxTokens())
                .put("seed", r.seed());
        if (r.kind().chat) {
            body.put("messages", r.messages()).put("user", r.session().user());
        } else {
            body.put("prompt", r.prompt());
        }
        if (!r.kind().webSocket) {
            body.put("stream", r.kind().streamed);
            if (r.kind().streamed) {
                body.put("stream_options", new JsonObject().put("include_usage", true));
            }
        }
        return body;
    }

    /**
     * The drawn session, or the next one not waiting for an answer: a user waits for the answer before the
     * next turn. Only which session takes the turn depends on timing; the draws do not.
     */
    private SoakSession idleFrom(int start) {
        for (int i = 0; i < SESSIONS; i++) {
            SoakSession s = sessions.get((start + i) % SESSIONS);
            if (!s.busy()) {
                return s;
            }
        }
        return sessions.get(start);
    }

    private int weighted() {
        int total = 0;
        for (int w : WEIGHTS) {
            total += w;
        }
        int pick = random.nextInt(total);
        for (int i = 0; i < WEIGHTS.length; i++) {
            pick -= WEIGHTS[i];
            if (pick < 0) {
                return i;
            }
        }
        throw new IllegalStateException("weights");
    }

    /** Made-up words after {@code head}, cut to {@code length} characters (ASCII: a byte a character). */
    private String words(String head, int length) {
        StringBuilder sb = new StringBuilder(head);
        while (sb.length() < length) {
            for (int s = random.nextInt(3); s >= 0; s--) {
                sb.append(SYLLABLES[random.nextInt(SYLLABLES.length)]);
            }
            sb.append(random.nextInt(8) == 0 ? ". " : " ");
        }
        return sb.substring(0, length).strip();
    }
}
