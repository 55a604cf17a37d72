package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/** Wire form of {@link Sampling}: {@code {"temperature", "top_p", "top_k", "seed"}}. */
public final class SamplingCodec implements JsonCodec<Sampling> {
    public static final SamplingCodec INSTANCE = new SamplingCodec();

    @Override
    public JsonObject encode(Sampling p) {
        return new JsonObject()
                .put("temperature", p.temperature())
                .put("top_p", p.topP())
                .put("top_k", p.topK())
                .put("seed", p.seed());
    }

    @Override
    public Sampling decode(JsonObject json) {
        return new Sampling(
                JsonFields.requiredDouble(json, "temperature"),
                JsonFields.requiredDouble(json, "top_p"),
                JsonFields.requiredInt(json, "top_k"),
                JsonFields.requiredLong(json, "seed"));
    }
}
