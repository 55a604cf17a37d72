package dev.tandem.upstream;

import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.engine.tokenizer.TokenizerIdentity;
import dev.tandem.protocol.ModelCard;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * What a worker learned of the model its upstream serves: the name and context length from
 * {@code /v1/models}, the tokenizer. Workers fronting the same model (its prefill and decode
 * instances) derive the same fingerprint: the name and the tokenizer's identity.
 */
public record UpstreamModel(
        String name, int contextLength, Tokenizer tokenizer, String tokenizerIdentity, ChatTemplate chatTemplate) {

    public static UpstreamModel of(String name, int contextLength, Tokenizer tokenizer) {
        return of(name, contextLength, tokenizer, ChatTemplate.ROLE_TAGS);
    }

    public static UpstreamModel of(String name, int contextLength, Tokenizer tokenizer, ChatTemplate chatTemplate) {
        return new UpstreamModel(name, contextLength, tokenizer, TokenizerIdentity.of(tokenizer), chatTemplate);
    }

    /**
     * The prompt format for chat requests: Tandem renders it (with the model's own template when the
     * tokenizer's directory has one, else role-tags), the upstream gets token ids.
     */
    public ModelCard card() {
        return new ModelCard(
                contextLength,
                tokenizerIdentity,
                chatTemplate.name(),
                chatTemplate.source(),
                chatTemplate.specialTokens());
    }

    public long fingerprint() {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256")
                    .digest(("openai " + name + " " + tokenizerIdentity).getBytes(StandardCharsets.UTF_8));
            long f = 0;
            for (int i = 0; i < 8; i++) {
                f = (f << 8) | (d[i] & 0xff);
            }
            return f;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}
