package dev.tandem.api;

import dev.tandem.engine.ModelInfo;
import dev.tandem.engine.SamplingParams;
import dev.tandem.engine.Tokenizer;
import dev.tandem.router.GenerationRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Validates a {@code /v1/completions} body against the model it will run on and tokenizes the
 * prompt. Every refusal names the offending parameter, as OpenAI's errors do.
 */
public final class CompletionRequestParser {
  private final ModelInfo model;
  private final Tokenizer tokenizer;
  private final int defaultMaxTokens;

  public CompletionRequestParser(ModelInfo model, Tokenizer tokenizer, int defaultMaxTokens) {
    this.model = model;
    this.tokenizer = tokenizer;
    this.defaultMaxTokens = defaultMaxTokens;
  }

  public CompletionCall parse(JsonObject body, String sessionHeader) {
    String requestedModel = optionalString(body, "model");
    if (requestedModel != null && !requestedModel.equals(model.name())) {
      throw new ApiException(404, "invalid_request_error", "model", "model_not_found",
          "The model '" + requestedModel + "' does not exist; this server serves '" + model.name() + "'");
    }
    int[] prompt = prompt(body.getValue("prompt"));
    int seqLen = model.config().seqLen();
    if (prompt.length >= seqLen) {
      throw new ApiException(400, "invalid_request_error", "prompt", "context_length_exceeded",
          "The prompt has " + prompt.length + " tokens; this model's context is " + seqLen
              + " tokens and at least one must be left to generate");
    }
    int maxTokens = maxTokens(body, seqLen - prompt.length);
    double temperature = number(body, "temperature", 1.0);
    if (temperature < 0 || temperature > 2) {
      throw ApiException.invalid("temperature", "'temperature' must be between 0 and 2, got " + temperature);
    }
    double topP = number(body, "top_p", 1.0);
    if (!(topP > 0 && topP <= 1)) {
      throw ApiException.invalid("top_p", "'top_p' must be in (0, 1], got " + topP);
    }
    long topK = integer(body, "top_k", -1);
    if (topK < -1 || topK > model.config().vocabSize()) {
      throw ApiException.invalid("top_k", "'top_k' must be -1 (off) or between 1 and the vocabulary size");
    }
    long seed = body.getValue("seed") == null ? ThreadLocalRandom.current().nextLong() : integer(body, "seed", 0);
    boolean stream = bool(body, "stream", false);
    String user = optionalString(body, "user");
    String session = sessionHeader != null && !sessionHeader.isBlank() ? sessionHeader : user;
    if (session != null && (session.isEmpty() || session.length() > 256)) {
      throw ApiException.invalid("user", "the session key must be 1 to 256 characters");
    }
    SamplingParams sampling = new SamplingParams(temperature, topP, (int) Math.max(0, topK), seed);
    return new CompletionCall(new GenerationRequest(prompt, maxTokens, sampling, new int[0], session), stream,
        model.name());
  }

  private int[] prompt(Object value) {
    if (value == null) {
      throw ApiException.invalid("prompt", "'prompt' is required");
    }
    if (value instanceof String text) {
      if (text.isEmpty()) {
        throw ApiException.invalid("prompt", "'prompt' must not be empty");
      }
      return tokenizer.encode(text, true);
    }
    if (!(value instanceof JsonArray array)) {
      throw ApiException.invalidType("prompt", "a string or an array of token ids");
    }
    if (array.isEmpty()) {
      throw ApiException.invalid("prompt", "'prompt' must not be empty");
    }
    int vocab = model.config().vocabSize();
    int[] tokens = new int[array.size()];
    for (int i = 0; i < tokens.length; i++) {
      Object e = array.getValue(i);
      if (e instanceof String) {
        throw ApiException.invalid("prompt", "batched prompts (an array of strings) are not supported; send one prompt");
      }
      if (!(e instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue())) {
        throw ApiException.invalidType("prompt", "a string or an array of token ids");
      }
      long id = n.longValue();
      if (id < 0 || id >= vocab) {
        throw ApiException.invalid("prompt", "token id " + id + " at index " + i + " is outside the vocabulary [0, "
            + vocab + ")");
      }
      tokens[i] = (int) id;
    }
    return tokens;
  }

  private int maxTokens(JsonObject body, int left) {
    long value = integer(body, "max_tokens", Math.min(defaultMaxTokens, left));
    if (value <= 0) {
      throw ApiException.invalid("max_tokens", "'max_tokens' must be at least 1, got " + value);
    }
    if (value > left) {
      throw new ApiException(400, "invalid_request_error", "max_tokens", "context_length_exceeded",
          "'max_tokens' is " + value + " but only " + left + " tokens of context are left after the prompt");
    }
    return (int) value;
  }

  private static String optionalString(JsonObject body, String field) {
    Object v = body.getValue(field);
    if (v == null || v instanceof String) {
      return (String) v;
    }
    throw ApiException.invalidType(field, "a string");
  }

  private static double number(JsonObject body, String field, double dflt) {
    Object v = body.getValue(field);
    if (v == null) {
      return dflt;
    }
    if (v instanceof Number n && Double.isFinite(n.doubleValue())) {
      return n.doubleValue();
    }
    throw ApiException.invalidType(field, "a number");
  }

  private static long integer(JsonObject body, String field, long dflt) {
    Object v = body.getValue(field);
    if (v == null) {
      return dflt;
    }
    if (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue()) && !(v instanceof Double d && d.isInfinite())) {
      return n.longValue();
    }
    throw ApiException.invalidType(field, "an integer");
  }

  private static boolean bool(JsonObject body, String field, boolean dflt) {
    Object v = body.getValue(field);
    if (v == null) {
      return dflt;
    }
    if (v instanceof Boolean b) {
      return b;
    }
    throw ApiException.invalidType(field, "a boolean");
  }
}
