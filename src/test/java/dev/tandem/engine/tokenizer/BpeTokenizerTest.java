package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class BpeTokenizerTest {
    static final List<String> HARD = List.of("日本語", "naïve", "👍🏽", "Ωμέγα");
    /** A corpus where these words are frequent enough to be merged, but not whole. */
    static final String CORPUS = "日本 日本 日本 本語 naé naé naà naà naö naö eve eve 👍 👍 🏽 Ωμ Ωμ μέ έγ γα γα "
            + "The quick brown fox doesn't jump; it's 123 4567 naive.\n\n  Done!";

    static BpeTokenizer trained() throws IOException {
        return read(BpeVocabularies.trained(CORPUS, 40));
    }

    static BpeTokenizer read(String json) throws IOException {
        return BpeTokenizer.read(
                new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)), BpeVocabularies.EOT, "test");
    }

    @Test
    void hardWordsSplitInsideCharactersStreamExactlyWithoutReplacementCharacters() throws IOException {
        BpeTokenizer t = trained();
        for (String word : HARD) {
            int[] ids = t.encode(word, false);
            assertTrue(ids.length > 1, word + " is one token: the test needs it split");
            assertTrue(
                    java.util.Arrays.stream(ids).anyMatch(id -> !validUtf8(t.decode(-1, id))),
                    word + " splits only between characters: the test needs a token holding part of one");
            TextStreamDecoder stream = new TextStreamDecoder(t, t.bos());
            StringBuilder streamed = new StringBuilder();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (int id : ids) {
                streamed.append(stream.push(id));
                all.writeBytes(t.decode(-1, id));
            }
            streamed.append(stream.flush());
            assertEquals(word, streamed.toString());
            assertEquals(TextStreamDecoder.decodeAll(all.toByteArray()), streamed.toString());
            assertFalse(streamed.toString().contains("\uFFFD"));
        }
    }

    @Test
    void encodingThenDecodingGivesTheTextBack() throws IOException {
        BpeTokenizer t = trained();
        String text = "The quick brown fox doesn't jump; it's 123 4567 naïve.\n\n  Done! 日本語 👍🏽 Ωμέγα\ttab  ";
        int[] ids = t.encode(text, true);
        assertEquals(t.bos(), ids[0]);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 1; i < ids.length; i++) {
            out.writeBytes(t.decode(ids[i - 1], ids[i]));
        }
        assertEquals(text, out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void specialTokensAreSplitOutAndContributeNoText() throws IOException {
        BpeTokenizer t = trained();
        int eot = t.eos();
        assertTrue(eot >= 256);
        int[] ids = t.encode("Done!" + BpeVocabularies.EOT + "The", false);
        assertTrue(java.util.Arrays.stream(ids).anyMatch(id -> id == eot));
        assertEquals(0, t.decode(-1, eot).length);
        assertEquals(0, t.decode(-1, t.bos()).length);
        assertTrue(t.isEndOfSequence(eot));
    }

    @Test
    void mergesApplyInRankOrderNotLeftToRight() throws IOException {
        // "b c" ranks first, so "abc" is [a, bc] and then "a bc": one token; left to right it would be [ab, c].
        String json = tiny(new JsonArray().add("b c").add("a b").add("a bc"));
        BpeTokenizer t = read(json);
        assertArrayEquals(new int[] {5}, t.encode("abc", false));
        BpeTokenizer pairs = read(tiny(new JsonArray()
                .add(new JsonArray().add("a").add("b"))
                .add(new JsonArray().add("b").add("c"))));
        assertArrayEquals(new int[] {3, 2}, pairs.encode("abc", false), "[a, b] ranks first: ab, c");
    }

    /** a b c ab bc abc, a byte-level-less vocabulary with an unk token. */
    private static String tiny(JsonArray merges) {
        return new JsonObject()
                .put("added_tokens", new JsonArray())
                .put(
                        "model",
                        new JsonObject()
                                .put("type", "BPE")
                                .put("unk_token", "<unk>")
                                .put(
                                        "vocab",
                                        new JsonObject()
                                                .put("a", 0)
                                                .put("b", 1)
                                                .put("c", 2)
                                                .put("ab", 3)
                                                .put("bc", 4)
                                                .put("abc", 5)
                                                .put("<unk>", 6))
                                .put("merges", merges))
                .encode();
    }

    @Test
    void sentencePieceStyleUsesMetaspaceByteFallbackAndDropsTheFirstSpaceAfterBos() throws IOException {
        BpeTokenizer t = read(llama2Style());
        int[] ids = t.encode("Hi 日", true);
        // <s>, ▁Hi, ▁, then 日 (not in the vocabulary) as its three UTF-8 bytes
        assertArrayEquals(new int[] {1, 263, 262, 3 + 0xE6, 3 + 0x97, 3 + 0xA5}, ids);
        assertEquals("Hi", new String(t.decode(1, 263), StandardCharsets.UTF_8));
        assertEquals(" Hi", new String(t.decode(262, 263), StandardCharsets.UTF_8));
        TextStreamDecoder stream = new TextStreamDecoder(t, 1);
        StringBuilder text = new StringBuilder();
        for (int i = 1; i < ids.length; i++) {
            text.append(stream.push(ids[i]));
        }
        assertEquals("Hi 日", text + stream.flush());
        assertEquals(0, t.decode(0, 2).length, "</s> is special");
    }

    /** Llama 2's layout: unk, s, /s, 256 byte tokens, then ▁, ▁H... with the legacy normalizer. */
    static String llama2Style() {
        JsonObject vocab = new JsonObject().put("<unk>", 0).put("<s>", 1).put("</s>", 2);
        for (int b = 0; b < 256; b++) {
            vocab.put(String.format("<0x%02X>", b), 3 + b);
        }
        vocab.put("H", 259)
                .put("i", 260)
                .put("▁H", 261)
                .put("▁", 262)
                .put("▁Hi", 263)
                .put("Hi", 264);
        JsonArray added = new JsonArray();
        for (int i = 0; i < 3; i++) {
            added.add(new JsonObject()
                    .put("id", i)
                    .put("content", List.of("<unk>", "<s>", "</s>").get(i))
                    .put("special", true));
        }
        return new JsonObject()
                .put("added_tokens", added)
                .put(
                        "normalizer",
                        new JsonObject()
                                .put("type", "Sequence")
                                .put(
                                        "normalizers",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("type", "Prepend")
                                                        .put("prepend", "▁"))
                                                .add(new JsonObject()
                                                        .put("type", "Replace")
                                                        .put("pattern", new JsonObject().put("String", " "))
                                                        .put("content", "▁"))))
                .putNull("pre_tokenizer")
                .put(
                        "post_processor",
                        new JsonObject()
                                .put("type", "TemplateProcessing")
                                .put(
                                        "single",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("SpecialToken", new JsonObject().put("id", "<s>")))
                                                .add(new JsonObject()
                                                        .put("Sequence", new JsonObject().put("id", "A")))))
                .put(
                        "decoder",
                        new JsonObject()
                                .put("type", "Sequence")
                                .put(
                                        "decoders",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("type", "Replace")
                                                        .put("pattern", new JsonObject().put("String", "▁"))
                                                        .put("content", " "))
                                                .add(new JsonObject().put("type", "ByteFallback"))
                                                .add(new JsonObject().put("type", "Fuse"))
                                                .add(new JsonObject()
                                                        .put("type", "Strip")
                                                        .put("content", " ")
                                                        .put("start", 1)
                                                        .put("stop", 0))))
                .put(
                        "model",
                        new JsonObject()
                                .put("type", "BPE")
                                .put("unk_token", "<unk>")
                                .put("byte_fallback", true)
                                .put("fuse_unk", true)
                                .put("vocab", vocab)
                                .put(
                                        "merges",
                                        new JsonArray().add("▁ H").add("▁H i").add("H i")))
                .encode();
    }

    @Test
    void unsupportedComponentsAreRefusedNotGuessed() {
        String json = new JsonObject()
                .put("pre_tokenizer", new JsonObject().put("type", "BertPreTokenizer"))
                .put("model", new JsonObject().put("type", "BPE").put("vocab", new JsonObject().put("a", 0)))
                .encode();
        IOException e = assertThrows(IOException.class, () -> read(json));
        assertTrue(e.getMessage().contains("BertPreTokenizer"), e.getMessage());
        String wordPiece = new JsonObject()
                .put("model", new JsonObject().put("type", "WordPiece").put("vocab", new JsonObject().put("a", 0)))
                .encode();
        assertThrows(IOException.class, () -> read(wordPiece));
    }

    @Test
    void partialCharacterBytesSurviveTheClusterTokenizerImage() throws IOException {
        BpeTokenizer t = trained();
        UpstreamTokenizer u = new UpstreamTokenizer("http://gpu:8000", "m", t.pieces(), t.bos());
        Tokenizer back = TokenizerImages.read(TokenizerImages.of(u));
        int partial = 0;
        for (int id = 0; id < t.vocabSize(); id++) {
            assertArrayEquals(t.decode(-1, id), back.decode(-1, id), "token " + id);
            partial += validUtf8(t.decode(-1, id)) ? 0 : 1;
        }
        assertTrue(partial > 0, "the vocabulary has tokens holding part of a character");
        assertEquals(TokenizerIdentity.of(u), TokenizerIdentity.of(back));
    }

    @Test
    void theByteAlphabetIsGpt2s() {
        assertEquals("Ġ", ByteLevelAlphabet.spell(new byte[] {' '}, 0, 1));
        assertEquals("Ċ", ByteLevelAlphabet.spell(new byte[] {'\n'}, 0, 1));
        assertEquals("æĹ¥", ByteLevelAlphabet.spell("日".getBytes(StandardCharsets.UTF_8), 0, 3));
        assertArrayEquals("日".getBytes(StandardCharsets.UTF_8), ByteLevelAlphabet.bytes("æĹ¥"));
    }

    static boolean validUtf8(byte[] bytes) {
        try {
            StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
