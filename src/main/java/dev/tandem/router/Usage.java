package dev.tandem.router;

import io.vertx.core.json.JsonObject;

/**
 * Token counts of a finished request, as OpenAI reports them. {@code cachedTokens}: prompt tokens whose
 * KV was reused rather than computed ({@code prompt_tokens_details.cached_tokens}).
 */
public record Usage(int promptTokens, int completionTokens, int cachedTokens) {

    public Usage(int promptTokens, int completionTokens) {
        this(promptTokens, completionTokens, 0);
    }

    public int totalTokens() {
        return promptTokens + completionTokens;
    }

    /** OpenAI's {@code usage} object, as every channel (HTTP, WebSocket, bridge) reports it. */
    public JsonObject toJson() {
        return new JsonObject()
                .put("prompt_tokens", promptTokens)
                .put("completion_tokens", completionTokens)
                .put("total_tokens", totalTokens())
                .put("prompt_tokens_details", new JsonObject().put("cached_tokens", cachedTokens));
    }
}
