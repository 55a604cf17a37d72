package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TokenizerIdentityTest {

    /** The byte tokenizer, but token {@code changed} reads as other bytes. */
    private static Tokenizer differingAt(int changed) {
        Tokenizer base = ByteTokenizer.INSTANCE;
        return new Tokenizer() {
            public int vocabSize() {
                return base.vocabSize();
            }

            public int bos() {
                return base.bos();
            }

            public int eos() {
                return base.eos();
            }

            public int[] encode(String text, boolean addBos) {
                return base.encode(text, addBos);
            }

            public byte[] decode(int previousToken, int token) {
                return token == changed ? new byte[] {'?', '?'} : base.decode(previousToken, token);
            }

            public int maxTokenBytes() {
                return base.maxTokenBytes();
            }

            public boolean isEndOfSequence(int token) {
                return base.isEndOfSequence(token);
            }
        };
    }

    @Test
    void namesAVocabularyByItsTokens() {
        String id = TokenizerIdentity.of(ByteTokenizer.INSTANCE);
        assertTrue(id.matches("sha256:[0-9a-f]{16}"), id);
        assertEquals(id, TokenizerIdentity.of(differingAt(-1)), "the same tokens, the same identity");
        assertNotEquals(id, TokenizerIdentity.of(differingAt(65)), "one token read otherwise is another vocabulary");
    }
}
