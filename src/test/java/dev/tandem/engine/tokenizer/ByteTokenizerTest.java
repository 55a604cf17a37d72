package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ByteTokenizerTest {
    private final ByteTokenizer tok = ByteTokenizer.INSTANCE;

    @Test
    void encodesUtf8BytesWithOptionalBos() {
        assertArrayEquals(new int[] {256, 0x68, 0xC3, 0xA9}, tok.encode("hé", true));
        assertArrayEquals(new int[] {0x68, 0xC3, 0xA9}, tok.encode("hé", false));
        assertArrayEquals(new int[] {256}, tok.encode("", true));
    }

    @Test
    void decodesBytesAndDropsSpecials() {
        assertArrayEquals(new byte[] {(byte) 0xC3}, tok.decode(256, 0xC3));
        assertArrayEquals(new byte[0], tok.decode(0x41, ByteTokenizer.BOS));
        assertArrayEquals(new byte[0], tok.decode(0x41, ByteTokenizer.EOS));
        assertThrows(IllegalArgumentException.class, () -> tok.decode(0, 258));
    }

    @Test
    void eosEndsSequence() {
        assertEquals(258, tok.vocabSize());
        assertTrue(tok.isEndOfSequence(ByteTokenizer.EOS));
        assertFalse(tok.isEndOfSequence(ByteTokenizer.BOS));
        assertFalse(tok.isEndOfSequence('a'));
    }
}
