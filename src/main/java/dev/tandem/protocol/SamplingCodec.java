package dev.tandem.protocol;

import dev.tandem.engine.SamplingParams;
import io.vertx.core.json.JsonObject;

/** Wire form of {@link SamplingParams}: {@code {"temperature", "top_p", "top_k", "seed"}}. */
public final class SamplingCodec implements JsonCodec<SamplingParams> {
  public static final SamplingCodec INSTANCE = new SamplingCodec();

  @Override
  public JsonObject encode(SamplingParams p) {
    return new JsonObject()
        .put("temperature", p.temperature())
        .put("top_p", p.topP())
        .put("top_k", p.topK())
        .put("seed", p.seed());
  }

  @Override
  public SamplingParams decode(JsonObject json) {
    try {
      return new SamplingParams(
          JsonFields.requiredDouble(json, "temperature"),
          JsonFields.requiredDouble(json, "top_p"),
          JsonFields.requiredInt(json, "top_k"),
          JsonFields.requiredLong(json, "seed"));
    } catch (IllegalArgumentException e) {
      throw new ProtocolException(e.getMessage());
    }
  }
}
