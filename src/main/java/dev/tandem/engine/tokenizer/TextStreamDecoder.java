package dev.tandem.engine.tokenizer;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Turns a stream of generated token ids into text as soon as it is complete. Tokens carry bytes, and a
 * multi-byte UTF-8 character can be split across tokens (byte-fallback tokens, byte-level models), so
 * a trailing incomplete sequence is held back until it completes; bytes that cannot complete become
 * U+FFFD as soon as the JDK's UTF-8 decoder can tell.
 *
 * <p>Uses the JDK decoder in streaming mode with replacement, so the concatenation of every
 * {@link #push} and the final {@link #flush} equals {@code new String(allBytes, UTF_8)}, the JDK's
 * own replacement rules included (e.g. an encoded surrogate ED A0 80 is one U+FFFD).
 *
 * <p>Not thread-safe: one decoder per generated sequence.
 */
public final class TextStreamDecoder {
    private final Tokenizer tokenizer;
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    private int previous;
    private ByteBuffer pending = ByteBuffer.allocate(16); // write mode: bytes not yet decoded

    /**
     * @param previousToken the token before the first one pushed: the last prompt token, or the
     *                      tokenizer's BOS when the generation starts right after it
     */
    public TextStreamDecoder(Tokenizer tokenizer, int previousToken) {
        this.tokenizer = tokenizer;
        this.previous = previousToken;
    }

    /** Adds one token and returns the text it completed (possibly empty). */
    public String push(int token) {
        byte[] bytes = tokenizer.decode(previous, token);
        previous = token;
        if (bytes.length == 0) {
            return "";
        }
        if (pending.remaining() < bytes.length) {
            ByteBuffer bigger =
                    ByteBuffer.allocate(Math.max(2 * pending.capacity(), pending.position() + bytes.length));
            pending.flip();
            bigger.put(pending);
            pending = bigger;
        }
        pending.put(bytes);
        return decode(false);
    }

    /** The text still held back, an incomplete tail as U+FFFD; the decoder is then empty. */
    public String flush() {
        String rest = decode(true);
        utf8.reset();
        return rest;
    }

    /** True when bytes of an incomplete character are being held back. */
    public boolean hasPending() {
        return pending.position() > 0;
    }

    /** The one-shot equivalent of a whole stream: {@code new String(bytes, UTF_8)}. */
    public static String decodeAll(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private String decode(boolean endOfInput) {
        pending.flip();
        // each byte yields at most one char (a 4-byte sequence yields 2), so this never overflows
        CharBuffer out = CharBuffer.allocate(pending.remaining() + 1);
        CoderResult result = utf8.decode(pending, out, endOfInput);
        if (result.isOverflow()) {
            throw new IllegalStateException("UTF-8 decoder overflowed a buffer sized for its input");
        }
        if (endOfInput) {
            utf8.flush(out);
        }
        pending.compact();
        return out.flip().toString();
    }
}
