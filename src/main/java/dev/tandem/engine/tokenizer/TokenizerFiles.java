package dev.tandem.engine.tokenizer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A tokenizer named by a file: a Hugging Face {@code tokenizer.json}, a model directory holding one, or a llama2.c {@code tokenizer.bin}. */
public final class TokenizerFiles {
    private TokenizerFiles() {}

    public static Tokenizer load(Path path) throws IOException {
        if (Files.isDirectory(path) || path.getFileName().toString().endsWith(".json")) {
            return BpeTokenizer.load(path);
        }
        return Llama2cTokenizer.load(path);
    }
}
