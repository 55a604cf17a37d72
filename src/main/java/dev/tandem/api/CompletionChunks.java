package dev.tandem.api;

import dev.tandem.router.Usage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** The {@code text_completion} objects of the OpenAI completions API, whole or as stream chunks. */
final class CompletionChunks {
  private final String id;
  private final String model;
  private final long created = System.currentTimeMillis() / 1000;

  CompletionChunks(long requestId, String model) {
    this.id = "cmpl-" + Long.toUnsignedString(requestId, 36);
    this.model = model;
  }

  JsonObject completion(String text, JsonArray tokenIds, String finishReason, Usage usage) {
    return envelope(choice(text, tokenIds, finishReason)).put("usage", usage(usage));
  }

  JsonObject chunk(String text, JsonArray tokenIds, String finishReason) {
    return envelope(choice(text, tokenIds, finishReason));
  }

  private JsonObject envelope(JsonObject choice) {
    return new JsonObject()
        .put("id", id)
        .put("object", "text_completion")
        .put("created", created)
        .put("model", model)
        .put("choices", new JsonArray().add(choice));
  }

  private static JsonObject choice(String text, JsonArray tokenIds, String finishReason) {
    return new JsonObject()
        .put("index", 0)
        .put("text", text)
        .put("token_ids", tokenIds)
        .put("logprobs", null)
        .put("finish_reason", finishReason);
  }

  static JsonObject usage(Usage usage) {
    return new JsonObject()
        .put("prompt_tokens", usage.promptTokens())
        .put("completion_tokens", usage.completionTokens())
        .put("total_tokens", usage.totalTokens());
  }

  static JsonArray ids(int[] tokens) {
    JsonArray array = new JsonArray();
    for (int t : tokens) {
      array.add(t);
    }
    return array;
  }
}
