package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Splits derived by tracing llama.cpp's {@code unicode_regex_split} (custom GPT-2 / Llama 3 / Qwen2
 * splitters and the std::regex steps) by hand; they also agree with that code compiled and run.
 */
class BpePreTokenizerTest {

    static Stream<Arguments> gpt2() {
        return Stream.of(
                split("gpt-2", "Hello world", "Hello", " world"),
                // case-sensitive contractions: 'LL is punctuation then letters
                split("gpt-2", "it's John's 'LL we'll", "it", "'s", " John", "'s", " '", "LL", " we", "'ll"),
                split("gpt-2", "abc 12345 x1y", "abc", " 12345", " x", "1", "y"),
                split("gpt-2", "(hello) $x", "(", "hello", ")", " $", "x"),
                split("gpt-2", "Hi!!\n\nok", "Hi", "!!", "\n", "\n", "ok"),
                // \s+(?!\S) keeps the last space for the word
                split("gpt-2", "a   b", "a", "  ", " b"),
                split("gpt-2", "a  ", "a", "  "),
                split("gpt-2", "\tword", "\t", "word"),
                split("gpt-2", "a\u00A0b", "a", "\u00A0", "b"),
                split("gpt-2", "a\r\nb", "a", "\r", "\n", "b"),
                split("gpt-2", "你好 世界", "你好", " 世界"),
                split("gpt-2", "hi 👋🏽!", "hi", " 👋🏽!"));
    }

    static Stream<Arguments> llama3() {
        return Stream.of(
                split("llama-bpe", "Hello world", "Hello", " world"),
                // case-insensitive contractions; a space before ' makes it punctuation
                split("llama-bpe", "it's John'S 'LL we'Ll", "it", "'s", " John", "'S", " '", "LL", " we", "'Ll"),
                split("llama3", "I'LL do", "I", "'LL", " do"),
                // [^\r\n\p{L}\p{N}]?\p{L}+ : any single non-letter, non-digit leads a word
                split("llama-bpe", "(hello) $world", "(hello", ")", " $", "world"),
                split("llama-v3", "a\tb", "a", "\tb"),
                split("llama-bpe", "1234567 x12", "123", "456", "7", " x", "12"),
                split("llama-bpe", "a 1234", "a", " ", "123", "4"),
                split("llama-bpe", "end.\n\nNext", "end", ".\n\n", "Next"),
                split("llama-bpe", "ok !\r\n", "ok", " !\r\n"),
                split("llama-bpe", "a   b", "a", "  ", " b"),
                // \s*[\r\n]+ takes spaces up to the last newline
                split("llama-bpe", "a  \n\n  b", "a", "  \n\n", " ", " b"),
                split("llama-bpe", "x\r\ny", "x", "\r\n", "y"),
                split("llama-bpe", "a  ", "a", "  "),
                split("llama-bpe", "a ", "a", " "),
                split("llama-bpe", "你好，世界", "你好", "，世界"),
                split("llama-bpe", "I ❤️ you 👍🏻", "I", " ❤️", " you", " 👍🏻"),
                // a lone surrogate is a control character (Cs), so it leads the word
                split("llama-bpe", "a\uD800b", "a", "\uD800b"));
    }

    static Stream<Arguments> qwen2() {
        return Stream.of(
                split("qwen2", "1234567 x12", "1", "2", "3", "4", "5", "6", "7", " x", "1", "2"),
                split("qwen2", "I'LL do", "I", "'LL", " do"),
                split("qwen2", "v2.0", "v", "2", ".", "0"),
                split("qwen2", "end.\n\nNext", "end", ".\n\n", "Next"),
                split("qwen2", "a   b", "a", "  ", " b"),
                split("qwen2", "x\r\n\r\ny", "x", "\r\n\r\n", "y"),
                split("qwen2", "(hi) ok", "(hi", ")", " ok"),
                split("qwen2", "你好 🙂!", "你好", " 🙂!"));
    }

    static Stream<Arguments> smollm() {
        return Stream.of(
                // \p{N} isolates every digit first; GPT-2's regex then runs on each piece
                split("smollm", "abc 12345 x1y", "abc", " ", "1", "2", "3", "4", "5", " x", "1", "y"),
                split("smollm", "we'll I'LL", "we", "'ll", " I", "'", "LL"),
                split("smollm", "x² ٣٤", "x", "²", " ", "٣", "٤"),
                split("smollm", "Hi!!\n\nok", "Hi", "!!", "\n", "\n", "ok"),
                split("smollm", "a   b", "a", "  ", " b"),
                split("smollm", "a\r\nb", "a", "\r", "\n", "b"),
                split("smollm", "日本語 👍", "日本語", " 👍"));
    }

    static Stream<Arguments> defaults() {
        return Stream.of(
                split("default", "Hello, world!", "Hello", ",", " world", "!"),
                // punctuation runs are split off first, so contractions never form
                split("default", "it's", "it", "'", "s"),
                split("default", " 12345 abc", " ", "123", "45", " abc"),
                split("default", "1234567", "123", "456", "7"),
                split("default", "a<=b", "a", "<=", "b"),
                // ` is not in the first class: GPT-2's regex keeps the space with it
                split("default", "a `b", "a", " `", "b"),
                split("falcon", "a `b", "a", " ", "`", "b"),
                split("default", "Hi!!\n\nok", "Hi", "!!", "\n", "\n", "ok"),
                split("default", "a   b", "a", "  ", " b"),
                // \p{N}+ takes Arabic-Indic digits, [0-9][0-9][0-9] only ASCII ones
                split("default", "x ٣٤٥٦", "x", " ", "٣٤٥٦"),
                split("default", "你好，世界", "你好", "，", "世界"),
                split("default", "hi 👋!", "hi", " 👋", "!"),
                split("default", "a\r\nb", "a", "\r", "\n", "b"),
                split("", "it's", "it", "'", "s"));
    }

    @ParameterizedTest
    @MethodSource({"gpt2", "llama3", "qwen2", "smollm", "defaults"})
    void splitsAsLlamaCpp(String pre, String text, List<String> words) {
        assertEquals(words, BpePreTokenizer.named(pre).split(text));
    }

    @ParameterizedTest
    @MethodSource("names")
    void wordsConcatenateToTheText(String pre) {
        BpePreTokenizer tokenizer = BpePreTokenizer.named(pre);
        Random random = new Random(pre.hashCode());
        for (int i = 0; i < 500; i++) {
            String text = randomText(random);
            List<String> words = tokenizer.split(text);
            assertEquals(text, String.join("", words), () -> pre + ": " + text);
            assertTrue(words.stream().noneMatch(String::isEmpty), () -> pre + ": " + text);
        }
    }

    static Stream<String> names() {
        return Stream.of("default", "falcon", "llama-bpe", "qwen2", "smollm", "gpt-2");
    }

    @Test
    void ignoresMergesForLlama3Only() {
        assertTrue(BpePreTokenizer.named("llama-bpe").ignoreMerges());
        assertTrue(BpePreTokenizer.named("llama3").ignoreMerges());
        assertTrue(BpePreTokenizer.named("llama-v3").ignoreMerges());
        assertFalse(BpePreTokenizer.named("dbrx").ignoreMerges());
        assertFalse(BpePreTokenizer.named("qwen2").ignoreMerges());
        assertFalse(BpePreTokenizer.named("smollm").ignoreMerges());
        assertFalse(BpePreTokenizer.named("gpt-2").ignoreMerges());
        assertFalse(BpePreTokenizer.named("default").ignoreMerges());
    }

    @Test
    void namesAndRefusals() {
        assertEquals("qwen2", BpePreTokenizer.named("qwen2").name());
        assertEquals("default", BpePreTokenizer.named("").name());
        assertEquals(List.of(), BpePreTokenizer.named("llama-bpe").split(""));
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> BpePreTokenizer.named("tekken"));
        assertTrue(e.getMessage().contains("tekken") && e.getMessage().contains("llama-bpe"), e.getMessage());
    }

    private static final String[] PIECES = {
        "a", "s", "t", "L", "'", "'", "0", "7", " ", " ", "  ", "\t", "\r", "\n", "\r\n", "!", ".", "$", "`", "|",
        "\u00A0", "\u3000", "\u2028", "\u0085", "你", "好", "٣", "²", "\u0301", "é", "👋", "🏽", "\u200D", "\uFE0F", "，",
        "\uD800", "\uDC00", "\u0001", "\u0378", "\u9FFD", "\uE000"
    };

    private static String randomText(Random random) {
        StringBuilder text = new StringBuilder();
        int length = random.nextInt(30);
        for (int i = 0; i < length; i++) {
            if (random.nextInt(20) == 0) {
                text.appendCodePoint(random.nextInt(Character.MAX_CODE_POINT + 1));
            } else {
                text.append(PIECES[random.nextInt(PIECES.length)]);
            }
        }
        return text.toString();
    }

    private static Arguments split(String pre, String text, String... words) {
        return Arguments.of(pre, text, List.of(words));
    }
}
