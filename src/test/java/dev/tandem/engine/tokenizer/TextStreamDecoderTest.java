package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.engine.SplitMix64;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Byte-level tokens make every UTF-8 split visible: one token per byte. */
class TextStreamDecoderTest {

    private static int[] bytes(int... values) {
        return values;
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                // "é" = C3 A9 split over two tokens: nothing until the second byte
                Arguments.of(bytes(0x61, 0xC3, 0xA9, 0x62), List.of("a", "", "é", "b"), ""),
                // "€" = E2 82 AC, "🦙" = F0 9F A6 99
                Arguments.of(
                        bytes(0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0xA6, 0x99), List.of("", "", "€", "", "", "", "🦙"), ""),
                // a stray continuation byte is replaced at once
                Arguments.of(bytes(0x80, 0x41), List.of("\uFFFD", "A"), ""),
                // an interrupted sequence: the FFFD comes when the non-continuation byte arrives, which is kept
                Arguments.of(bytes(0xE2, 0x82, 0x41), List.of("", "", "\uFFFDA"), ""),
                // an overlong start is replaced as soon as the second byte shows it, then the stray byte too
                Arguments.of(bytes(0xE0, 0x80, 0x41), List.of("", "\uFFFD\uFFFD", "A"), ""),
                // an encoded surrogate is one FFFD (the JDK's rule), given when its last byte arrives
                Arguments.of(bytes(0xED, 0xA0, 0x80, 0x41), List.of("", "", "\uFFFD", "A"), ""),
                Arguments.of(bytes(0xFF, 0xC0, 0xF5), List.of("\uFFFD", "\uFFFD", "\uFFFD"), ""),
                // an incomplete tail is held back and flushed as one FFFD
                Arguments.of(bytes(0x68, 0xF0, 0x9F, 0xA6), List.of("h", "", "", ""), "\uFFFD"),
                // special tokens add nothing
                Arguments.of(bytes(ByteTokenizer.BOS, 0x6F, 0x6B, ByteTokenizer.EOS), List.of("", "o", "k", ""), ""));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void pushesEmitCompleteTextOnly(int[] tokens, List<String> expectedPushes, String expectedFlush) {
        TextStreamDecoder d = new TextStreamDecoder(ByteTokenizer.INSTANCE, ByteTokenizer.BOS);
        List<String> pushes = new ArrayList<>();
        for (int t : tokens) {
            pushes.add(d.push(t));
        }
        assertEquals(expectedPushes, pushes);
        assertEquals(expectedFlush, d.flush());
        assertEquals("", d.flush());
    }

    /** Streamed text equals decoding all the bytes at once with the JDK's replacement rules. */
    @Test
    void streamEqualsOneShotDecodingForRandomBytes() {
        SplitMix64 rng = new SplitMix64(42);
        int[] interesting = {
            0x41, 0x7F, 0x80, 0x8F, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF
        };
        for (int round = 0; round < 3000; round++) {
            int len = (int) (rng.nextLong() >>> 60);
            byte[] data = new byte[len];
            for (int i = 0; i < len; i++) {
                data[i] = (byte) interesting[(int) ((rng.nextLong() >>> 1) % interesting.length)];
            }
            TextStreamDecoder d = new TextStreamDecoder(ByteTokenizer.INSTANCE, ByteTokenizer.BOS);
            StringBuilder streamed = new StringBuilder();
            for (byte b : data) {
                streamed.append(d.push(b & 0xFF));
            }
            streamed.append(d.flush());
            String expected = new String(data, StandardCharsets.UTF_8);
            assertEquals(expected, streamed.toString(), () -> hex(data));
        }
    }

    private static String hex(byte[] data) {
        StringBuilder sb = new StringBuilder();
        for (byte b : data) {
            sb.append(String.format("%02X ", b & 0xFF));
        }
        return sb.toString();
    }
}
