package dev.tandem.engine.tokenizer;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Names a vocabulary by what it is, not where it came from: a SHA-256 over its size, its special
 * tokens and every token's bytes. Two tokenizers with the same identity turn text into the same ids,
 * so a router may tokenize for any worker that announces it.
 */
public final class TokenizerIdentity {
    private TokenizerIdentity() {}

    /** {@code sha256:} and the digest's first 16 hex digits. */
    public static String of(Tokenizer tokenizer) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
        sha.update(("vocab " + tokenizer.vocabSize() + " bos " + tokenizer.bos() + " eos " + tokenizer.eos())
                .getBytes(StandardCharsets.UTF_8));
        for (int t = 0; t < tokenizer.vocabSize(); t++) {
            byte[] bytes;
            try {
                // After BOS, the way a prompt's first token is read: the same for every tokenizer call.
                bytes = tokenizer.decode(tokenizer.bos(), t);
            } catch (RuntimeException e) {
                bytes = new byte[0];
            }
            sha.update((byte) (bytes.length >>> 8));
            sha.update((byte) bytes.length);
            sha.update(bytes);
        }
        return "sha256:" + HexFormat.of().formatHex(sha.digest()).substring(0, 16);
    }
}
