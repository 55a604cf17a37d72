package dev.tandem.bench;

import io.vertx.core.json.JsonArray;

/**
 * One request of the soak mix, as drawn.
 *
 * @param seed              the request's sampling seed: the same prompt gets the same answer
 * @param cancelAfterChunks close the stream (SSE) or send a cancel (WebSocket) after this many chunks with
 *                          text; 0 = never
 * @param prompt            a completion's prompt; null for chat
 * @param messages          a chat's conversation as sent (system, earlier turns, the new user message); null
 *                          for completions
 * @param session           the chat session the turn belongs to; null for completions
 */
record SoakRequest(
        long index,
        SoakKind kind,
        int maxTokens,
        long seed,
        int cancelAfterChunks,
        String prompt,
        JsonArray messages,
        SoakSession session) {

    boolean keepsText() {
        return session != null;
    }
}
