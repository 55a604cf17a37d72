package dev.tandem.engine.tokenizer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The tokenizer of a model an upstream server (vLLM, SGLang) serves. Encoding asks the upstream's
 * {@code /tokenize}, so token ids are exactly the upstream's; decoding reads a table of every token's
 * text learned once from its {@code /detokenize}, so streaming text never waits on the network.
 * {@link #encode} blocks on the network: callers run it off the event loop (requests are parsed on
 * worker threads).
 *
 * <p>Where {@code /tokenize} is asked is an {@link Encoder}: the upstream itself by default, and on a
 * router the workers that front it (the upstream may be reachable from its pod only).
 *
 * <p>Known limit: a byte-level BPE token holding part of a UTF-8 character detokenizes alone to U+FFFD,
 * so such characters stream as U+FFFD; a configured tokenizer file ({@code model.tokenizer}) avoids it.
 */
public final class UpstreamTokenizer implements Tokenizer {
    private final String baseUrl;
    private final String model;
    private final byte[][] pieces;
    private final int bos;
    private final int maxTokenBytes;
    private final Encoder encoder;
    private final ChatEncoder chatEncoder;

    /** Asks the upstream's {@code /tokenize} for a text's token ids. Blocking. */
    @FunctionalInterface
    public interface Encoder {
        int[] encode(String model, String text, boolean addSpecialTokens);
    }

    /**
     * Asks vLLM's {@code /tokenize} for a chat's token ids, rendered by the server's own template:
     * {@code request} is {@link UpstreamChatTemplate#request}'s. Blocking.
     */
    @FunctionalInterface
    public interface ChatEncoder {
        int[] encodeChat(String model, java.util.Map<String, Object> request);
    }

    public UpstreamTokenizer(String baseUrl, String model, byte[][] pieces, int bos) {
        this(baseUrl, model, pieces, bos, null, null);
    }

    private UpstreamTokenizer(
            String baseUrl, String model, byte[][] pieces, int bos, Encoder encoder, ChatEncoder chatEncoder) {
        this.baseUrl = baseUrl;
        this.model = model;
        this.pieces = pieces;
        this.bos = bos;
        int max = 1;
        for (byte[] p : pieces) {
            max = Math.max(max, p.length);
        }
        this.maxTokenBytes = max;
        this.encoder = encoder != null ? encoder : new UpstreamTokenize(baseUrl)::encode;
        this.chatEncoder = chatEncoder != null ? chatEncoder : new UpstreamTokenize(baseUrl)::encodeChat;
    }

    /** The same vocabulary, encoding through {@code encoder}. */
    public UpstreamTokenizer withEncoder(Encoder encoder) {
        return new UpstreamTokenizer(baseUrl, model, pieces, bos, encoder, chatEncoder);
    }

    /** The same vocabulary, encoding through {@code encoder} and chats through {@code chatEncoder}. */
    public UpstreamTokenizer withEncoders(Encoder encoder, ChatEncoder chatEncoder) {
        return new UpstreamTokenizer(baseUrl, model, pieces, bos, encoder, chatEncoder);
    }

    /** A chat's token ids as the upstream's own chat template makes them (vLLM's /tokenize with messages). */
    public int[] encodeChat(ChatPrompt prompt) {
        return checked(chatEncoder.encodeChat(model, UpstreamChatTemplate.request(prompt)));
    }

    /** The pieces: an array of 16 + length and a slot per token. */
    @Override
    public long footprintBytes() {
        long bytes = 16;
        for (byte[] p : pieces) {
            bytes += 16 + p.length + 8;
        }
        return bytes;
    }

    @Override
    public boolean encodesInProcess() {
        return false;
    }

    /** The upstream's model name, as /tokenize is asked for it. */
    public String model() {
        return model;
    }

    /** The upstream whose {@code /tokenize} encodes. */
    public String baseUrl() {
        return baseUrl;
    }

    @Override
    public int vocabSize() {
        return pieces.length;
    }

    @Override
    public int bos() {
        return bos;
    }

    /** The upstream ends its sequences itself: Tandem knows no end-of-sequence id for it. */
    @Override
    public int eos() {
        return -1;
    }

    @Override
    public int[] encode(String text, boolean addBos) {
        return checked(encoder.encode(model, text, addBos));
    }

    private int[] checked(int[] ids) {
        for (int id : ids) {
            if (id < 0 || id >= pieces.length) {
                throw new IllegalArgumentException("the upstream's /tokenize answered token " + id
                        + ", outside its vocabulary of " + pieces.length);
            }
        }
        return ids;
    }

    @Override
    public byte[] decode(int previousToken, int token) {
        if (token < 0 || token >= pieces.length) {
            throw new IllegalArgumentException("token " + token + " is outside the vocabulary");
        }
        return pieces[token];
    }

    @Override
    public int maxTokenBytes() {
        return maxTokenBytes;
    }

    @Override
    public boolean isEndOfSequence(int token) {
        return false;
    }

    /** The table and where to encode, for the cluster's tokenizer store. */
    public byte[] image() {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeUTF(baseUrl);
            out.writeUTF(model);
            out.writeInt(bos);
            out.writeInt(pieces.length);
            for (byte[] p : pieces) {
                out.writeInt(p.length);
                out.write(p);
            }
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static UpstreamTokenizer read(byte[] image) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(image));
        String url = in.readUTF();
        String model = in.readUTF();
        int bos = in.readInt();
        int n = in.readInt();
        if (n <= 0 || n > image.length) {
            throw new IOException("an upstream tokenizer image with " + n + " tokens");
        }
        byte[][] pieces = new byte[n][];
        for (int i = 0; i < n; i++) {
            int len = in.readInt();
            if (len < 0 || len > in.available()) {
                throw new IOException("token " + i + " of an upstream tokenizer image is cut short");
            }
            pieces[i] = in.readNBytes(len);
        }
        return new UpstreamTokenizer(url, model, pieces, bos);
    }
}
