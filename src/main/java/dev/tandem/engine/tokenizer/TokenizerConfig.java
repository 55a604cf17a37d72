package dev.tandem.engine.tokenizer;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A model directory's {@code tokenizer_config.json}, read once by whoever needs it: the tokenizer (its
 * end-of-sequence token) and the chat template loader (the template and the special tokens it gets).
 */
record TokenizerConfig(Map<?, ?> values) {

    // Jackson rather than Vert.x's JSON: the engine packages know nothing of Vert.x.
    private static final ObjectMapper JSON = new ObjectMapper();

    static final TokenizerConfig NONE = new TokenizerConfig(Map.of());

    /** The directory's config, or {@link #NONE} when it has none. Blocking: reads a file. */
    static TokenizerConfig in(Path modelDir) {
        Path file = modelDir.resolve("tokenizer_config.json");
        if (!Files.isRegularFile(file)) {
            return NONE;
        }
        try {
            return new TokenizerConfig(JSON.readValue(file.toFile(), Map.class));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    Object get(String key) {
        return values.get(key);
    }

    /** A special token ({@code bos_token}, {@code eos_token}, …): a string or an AddedToken object. */
    String specialToken(String key) {
        Object value = values.get(key);
        if (value instanceof String s) {
            return s;
        } else if (value instanceof Map<?, ?> o && o.get("content") instanceof String content) {
            return content;
        }
        return null;
    }
}
