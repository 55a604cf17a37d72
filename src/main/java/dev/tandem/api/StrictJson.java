package dev.tandem.api;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * JSON as every Tandem surface takes it: UTF-8 only. Jackson guesses UTF-16 and UTF-32 from a body's
 * first bytes, so a UTF-16 body was accepted on a channel that promises UTF-8; and malformed UTF-8
 * was read with replacement characters. Here both are refused.
 */
public final class StrictJson {
    private StrictJson() {}

    /** The bytes as UTF-8 text, or null when they are not well-formed UTF-8. */
    public static String utf8(Buffer bytes) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.getBytes()))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** Parses UTF-8 JSON; a {@link DecodeException} when the bytes are not UTF-8 or not JSON. */
    public static Object decode(Buffer bytes) {
        String text = utf8(bytes);
        if (text == null) {
            throw new DecodeException("the bytes are not well-formed UTF-8");
        }
        return Json.decodeValue(text);
    }
}
