package dev.tandem.engine.gguf;

import dev.tandem.engine.ModelInfo;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.JinjaChatTemplate;
import dev.tandem.engine.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.Map;

/**
 * A GGUF file as a reference engine: its architecture and tensors ({@link GgufWeights}, mapped), its
 * tokenizer and chat template from the metadata, named after the file, fingerprinted so that no worker
 * ever takes KV computed by another model.
 */
public final class GgufModel {
    /** The longest context the engine runs whatever the model was trained for (KV is budgeted by the pool). */
    public static final int MAX_CONTEXT = 8192;

    private static final int SAMPLE_BYTES = 4096;

    private GgufModel() {}

    public static boolean isGguf(Path file) {
        return file.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".gguf");
    }

    public static ReferenceEngine load(Path file, int blockSize) throws IOException {
        GgufFile gguf = GgufFile.open(file);
        GgufArchitecture arch = GgufArchitecture.of(gguf, MAX_CONTEXT);
        GgufWeights weights = new GgufWeights(gguf, arch);
        Tokenizer tokenizer = GgufTokenizers.of(gguf.metadata());
        ModelInfo info = new ModelInfo(name(file), arch.config(), fingerprint(gguf));
        return ReferenceEngine.create(info, weights, tokenizer, chatTemplate(gguf, info.name(), tokenizer), blockSize);
    }

    /** The file name without {@code .gguf}. */
    static String name(Path file) {
        String f = file.getFileName().toString();
        return isGguf(file) ? f.substring(0, f.length() - ".gguf".length()) : f;
    }

    /** {@code tokenizer.chat_template}, given the BOS and EOS texts as Hugging Face passes them; else role tags. */
    static ChatTemplate chatTemplate(GgufFile gguf, String name, Tokenizer tokenizer) {
        GgufMetadata m = gguf.metadata();
        if (!m.has("tokenizer.chat_template")) {
            return ChatTemplate.ROLE_TAGS;
        }
        Map<String, String> special = new HashMap<>();
        String[] tokens = m.strings("tokenizer.ggml.tokens");
        if (tokenizer.bos() >= 0) {
            special.put("bos_token", tokens[tokenizer.bos()]);
        }
        if (tokenizer.eos() >= 0) {
            special.put("eos_token", tokens[tokenizer.eos()]);
        }
        return new JinjaChatTemplate(name, m.string("tokenizer.chat_template"), special);
    }

    /**
     * SHA-256 over the header (metadata and tensor table) and, of every tensor, its first, middle and last
     * 4 KiB: any two real checkpoints differ there, and a 1 GB file is fingerprinted without reading it.
     */
    static long fingerprint(GgufFile gguf) throws IOException {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (FileChannel channel = FileChannel.open(gguf.path(), StandardOpenOption.READ)) {
            ByteBuffer header = ByteBuffer.allocate((int) Math.min(gguf.dataStart(), 64L << 20));
            channel.read(header, 0);
            sha.update(header.flip());
            for (GgufTensorInfo t : gguf.tensors()) {
                ByteBuffer data = gguf.data(t);
                int size = data.capacity();
                for (int at :
                        new int[] {0, Math.max(0, size / 2 - SAMPLE_BYTES / 2), Math.max(0, size - SAMPLE_BYTES)}) {
                    sha.update(data.slice(at, Math.min(SAMPLE_BYTES, size - at)));
                }
            }
        }
        return ByteBuffer.wrap(sha.digest()).getLong();
    }
}
