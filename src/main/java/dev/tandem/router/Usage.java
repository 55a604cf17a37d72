package dev.tandem.router;

import io.vertx.core.json.JsonObject;

/** Token counts of a finished request, as OpenAI reports them. */
public record Usage(int promptTokens, int completionTokens) {
    public int totalTokens() {
        return promptTokens + completionTokens;
    }

    /** OpenAI's {@code usage} object, as every channel (HTTP, WebSocket, bridge) reports it. */
    public JsonObject toJson() {
        return new JsonObject()
                .put("prompt_tokens", promptTokens)
                .put("completion_tokens", completionTokens)
                .put("total_tokens", totalTokens());
    }
}
