package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a worker says of its model beyond name and fingerprint, so that routers can serve it without
 * loading it themselves: the context window, which tokenizer its token ids belong to, and how chat
 * messages become its prompt. Workers in other languages may leave it out.
 *
 * @param tokenizer    an identity of the vocabulary ({@code sha256:} and 16 hex digits over every token's
 *                     bytes): equal identities tokenize alike
 * @param chatTemplate the chat template's name ({@code role-tags}, {@code llama2}, or the model's)
 * @param chatTemplateSource the model's own Jinja chat template (tokenizer_config.json's), or null for a
 *     built-in one named by {@code chatTemplate}; routers render chats with it
 * @param specialTokens the tokens the template is given ({@code bos_token}, {@code eos_token}, …)
 */
public record ModelCard(
        int contextLength,
        String tokenizer,
        String chatTemplate,
        String chatTemplateSource,
        Map<String, String> specialTokens) {

    public ModelCard(int contextLength, String tokenizer, String chatTemplate) {
        this(contextLength, tokenizer, chatTemplate, null, Map.of());
    }

    public ModelCard {
        specialTokens = specialTokens == null ? Map.of() : Map.copyOf(specialTokens);
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
            JsonObject json = new JsonObject()
                    .put("context_length", c.contextLength)
                    .put("tokenizer", c.tokenizer)
                    .put("chat_template", c.chatTemplate);
            if (c.chatTemplateSource != null) {
                // Optional fields: cards without them (older workers, other languages) still decode.
                json.put("chat_template_source", c.chatTemplateSource)
                        .put("special_tokens", new JsonObject(new LinkedHashMap<>(c.specialTokens)));
            }
            return json;
        }

        @Override
        public ModelCard decode(JsonObject json) {
            Object source = json.getValue("chat_template_source");
            if (source != null && !(source instanceof String)) {
                throw new ProtocolException("a model card's chat_template_source must be a string");
            }
            Map<String, String> tokens = new LinkedHashMap<>();
            Object special = json.getValue("special_tokens");
            if (special instanceof JsonObject o) {
                o.forEach(e -> {
                    if (e.getValue() instanceof String v) {
                        tokens.put(e.getKey(), v);
                    }
                });
            }
            return new ModelCard(
                    JsonFields.requiredInt(json, "context_length"),
                    JsonFields.requiredString(json, "tokenizer"),
                    JsonFields.requiredString(json, "chat_template"),
                    (String) source,
                    tokens);
        }
    };
}
