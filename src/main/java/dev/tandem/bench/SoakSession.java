package dev.tandem.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;

/**
 * A multi-turn chat as a client keeps it: a system prompt (one of the mix's shared prefixes), the turns so
 * far, and its {@code user}, so the target's session affinity sends every turn to the decode worker that
 * holds the conversation's KV. Each turn resends the whole conversation with the answer actually received.
 * When the next turn would not fit the token budget the conversation starts over (same user, same system
 * prompt), as a chat UI that trims its history would.
 */
final class SoakSession {
    private final String user;
    private final String system;
    private JsonArray history = new JsonArray();
    private int running;

    SoakSession(String user, String system) {
        this.user = user;
        this.system = system;
    }

    String user() {
        return user;
    }

    boolean busy() {
        return running > 0;
    }

    /** The messages of the next turn: the conversation plus {@code userMessage}, trimmed to fit {@code budget}. */
    JsonArray turn(String userMessage, int maxTokens, int budget) {
        JsonObject user = message("user", userMessage);
        JsonArray turns = history.copy().add(user);
        if (estimatedTokens(system, turns) + maxTokens > budget) {
            turns = new JsonArray().add(user);
        }
        running++;
        return new JsonArray().add(message("system", system)).addAll(turns);
    }

    /** A turn ended: a completed one's answer joins the conversation; a failed or cancelled one is dropped. */
    void ended(JsonArray sent, SoakResult result) {
        running--;
        if (result.completed() && result.text() != null) {
            JsonArray turns = sent.copy();
            turns.remove(0); // the system prompt
            history = turns.add(message("assistant", result.text()));
        }
    }

    /**
     * Tokens of the conversation under Tandem's {@code role-tags} template with a byte-level tokenizer: the
     * rendered bytes ({@code <|role|>\n} + content + {@code \n} each, then {@code <|assistant|>\n}) + BOS.
     * Other templates spend about as much on their tags; the budget leaves room for the difference.
     */
    static int estimatedTokens(String system, JsonArray turns) {
        int bytes = tagged("system", system);
        for (int i = 0; i < turns.size(); i++) {
            JsonObject m = turns.getJsonObject(i);
            bytes += tagged(m.getString("role"), m.getString("content"));
        }
        return bytes + "<|assistant|>\n".length() + 1;
    }

    private static int tagged(String role, String content) {
        return role.length() + 5 + content.getBytes(StandardCharsets.UTF_8).length + 1;
    }

    private static JsonObject message(String role, String content) {
        return new JsonObject().put("role", role).put("content", content);
    }
}
