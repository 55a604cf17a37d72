package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/**
 * What a worker says of its model beyond name and fingerprint, so that routers can serve it without
 * loading it themselves: the context window, which tokenizer its token ids belong to, and how chat
 * messages become its prompt. Workers in other languages may leave it out.
 *
 * @param tokenizer    an identity of the vocabulary ({@code sha256:} and 16 hex digits over every token's
 *                     bytes): equal identities tokenize alike
 * @param chatTemplate the chat template's name ({@code role-tags}, {@code llama2})
 */
public record ModelCard(int contextLength, String tokenizer, String chatTemplate) {

    public ModelCard {
        if (contextLength <= 0) {
            throw new ProtocolException("a model's context length must be positive, got " + contextLength);
        }
        if (tokenizer == null || tokenizer.isBlank() || chatTemplate == null || chatTemplate.isBlank()) {
            throw new ProtocolException("a model card names its tokenizer and chat template");
        }
    }

    public static final JsonCodec<ModelCard> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(ModelCard c) {
            return new JsonObject()
                    .put("context_length", c.contextLength)
                    .put("tokenizer", c.tokenizer)
                    .put("chat_template", c.chatTemplate);
        }

        @Override
        public ModelCard decode(JsonObject json) {
            return new ModelCard(
                    JsonFields.requiredInt(json, "context_length"),
                    JsonFields.requiredString(json, "tokenizer"),
                    JsonFields.requiredString(json, "chat_template"));
        }
    };
}
