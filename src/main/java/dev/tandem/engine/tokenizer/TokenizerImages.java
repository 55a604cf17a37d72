package dev.tandem.engine.tokenizer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A tokenizer as bytes, so that a router can tokenize for a model it never loaded: a tag naming the
 * kind ({@code TTK1 byte} for the byte tokenizer, {@code TTK1 llama2c} followed by the
 * {@code tokenizer.bin} image, {@code TTK1 spm} and {@code TTK1 bpe} for a GGUF file's vocabularies),
 * read back by {@link #read}. The image carries the vocabulary only;
 * whoever reads one checks it against the {@link dev.tandem.engine.tokenizer.TokenizerIdentity} it was filed under.
 */
public final class TokenizerImages {
    private static final byte[] BYTE = "TTK1 byte\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LLAMA2C = "TTK1 llama2c\n".getBytes(StandardCharsets.US_ASCII);
    /** A GGUF file's vocabularies: SentencePiece, byte-level BPE. */
    private static final byte[] SPM = "TTK1 spm\n".getBytes(StandardCharsets.US_ASCII);

    private static final byte[] BPE = "TTK1 bpe\n".getBytes(StandardCharsets.US_ASCII);
    /** An upstream server's vocabulary and where its /tokenize is (engine openai). */
    private static final byte[] UPSTREAM = "TTK1 upstream\n".getBytes(StandardCharsets.US_ASCII);

    private TokenizerImages() {}

    /** The image of a tokenizer this package knows; any other kind throws {@link IllegalArgumentException}. */
    public static byte[] of(Tokenizer tokenizer) {
        if (tokenizer instanceof ByteTokenizer) {
            return BYTE.clone();
        }
        if (tokenizer instanceof Llama2cTokenizer t) {
            byte[] image = t.image();
            byte[] out = Arrays.copyOf(LLAMA2C, LLAMA2C.length + image.length);
            System.arraycopy(image, 0, out, LLAMA2C.length, image.length);
            return out;
        }
        if (tokenizer instanceof UpstreamTokenizer t) {
            return concat(UPSTREAM, t.image());
        }
        try {
            if (tokenizer instanceof SpmTokenizer t) {
                return concat(SPM, t.image());
            }
            if (tokenizer instanceof GgufBpeTokenizer t) {
                return concat(BPE, t.image());
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e); // writing to memory
        }
        throw new IllegalArgumentException(
                "no image format for a " + tokenizer.getClass().getSimpleName());
    }

    /** The tokenizer an image describes; a malformed or unknown image is an {@link IOException}. */
    public static Tokenizer read(byte[] image) throws IOException {
        if (Arrays.equals(image, BYTE)) {
            return ByteTokenizer.INSTANCE;
        }
        if (startsWith(image, LLAMA2C)) {
            return Llama2cTokenizer.read(
                    Arrays.copyOfRange(image, LLAMA2C.length, image.length), -1, "llama2c tokenizer image");
        }
        if (startsWith(image, UPSTREAM)) {
            return UpstreamTokenizer.read(Arrays.copyOfRange(image, UPSTREAM.length, image.length));
        }
        if (startsWith(image, SPM)) {
            return SpmTokenizer.readImage(stream(image, SPM.length));
        }
        if (startsWith(image, BPE)) {
            return GgufBpeTokenizer.readImage(stream(image, BPE.length));
        }
        throw new IOException("not a tokenizer image (" + image.length + " bytes of an unknown kind)");
    }

    private static java.io.DataInputStream stream(byte[] image, int from) {
        return new java.io.DataInputStream(new java.io.ByteArrayInputStream(image, from, image.length - from));
    }

    private static byte[] concat(byte[] tag, byte[] image) {
        byte[] out = Arrays.copyOf(tag, tag.length + image.length);
        System.arraycopy(image, 0, out, tag.length, image.length);
        return out;
    }

    private static boolean startsWith(byte[] image, byte[] tag) {
        return image.length >= tag.length && Arrays.equals(image, 0, tag.length, tag, 0, tag.length);
    }
}
