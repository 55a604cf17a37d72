package dev.tandem.engine.gguf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Text to compare tokenizers on: the project's own English docs and Java code (indentation runs
 * included), multilingual and emoji lines, whitespace runs, and text that looks like special tokens.
 */
final class TokenizerCorpus {
    private static final String[] WORLD = {
        "日本語のテキストを正しく分割できますか？",
        "東京タワーは1958年に完成しました。",
        "中文分词是一个有趣的问题，尤其是在没有空格的情况下。",
        "我爱自然语言处理！",
        "한국어 문장도 토큰화해야 합니다.",
        "Привет, как дела? Всё хорошо.",
        "Ελληνικά: Καλημέρα κόσμε",
        "العربية: مرحبا بالعالم",
        "עברית: שלום עולם",
        "हिन्दी: नमस्ते दुनिया",
        "ไทย: สวัสดีชาวโลก",
        "Tiếng Việt: Xin chào thế giới",
        "Ünïcödé àccénts: naïve café résumé façade",
        "e\u0301 vs é (combining acute)",
        "emoji: 😀😃😄😁 🚀🌍 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️",
        "flags 🇯🇵🇩🇪🇺🇸 and keycaps 1️⃣ #️⃣",
        "math: ∀x ∈ ℝ, x² ≥ 0; ∑ᵢ aᵢ ≈ π ≠ ∞",
        "box drawing ┌─┬─┐ │ │ │ └─┴─┘",
        "full-width ＡＢＣ　１２３ and half-width ｱｲｳ",
        "mixed 日本語 English 한국어 中文 in one line",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕕𝕠𝕦𝕓𝕝𝕖-𝕤𝕥𝕣𝕦𝕔𝕜 and 𠀋 outside the BMP",
    };

    private static final String[] SPECIAL_LOOKING = {
        "<s>",
        "</s>",
        "<unk>",
        "<s>Hello</s>",
        "text<s>inside</s>text",
        " <s> spaced </s> ",
        "<0x0A>",
        "<0xFF><0x00>",
        "▁leading▁meta▁space",
        "<|im_start|>user\nhi<|im_end|>",
        "<|endoftext|>",
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>",
        "[INST] hi [/INST]",
        "<<SYS>>\nsystem\n<</SYS>>",
        "<pad>",
        "<mask>",
        "</s></s></s>",
        "<s><s>",
        "<",
        ">",
        "</",
        "s>",
    };

    private TokenizerCorpus() {}

    /** At least {@code minLines} lines, the same on every run. */
    static List<String> lines(int minLines) throws IOException {
        List<String> lines = new ArrayList<>();
        try (Stream<Path> docs = Files.list(Path.of("src/site/markdown"))) {
            for (Path p : docs.sorted().toList()) {
                Files.readAllLines(p).stream().filter(l -> !l.isBlank()).forEach(lines::add);
            }
        }
        for (String source : List.of(
                "src/main/java/dev/tandem/engine/reference/BatchForward.java",
                "src/main/java/dev/tandem/engine/gguf/GgufFile.java",
                "src/main/java/dev/tandem/engine/tokenizer/SpmTokenizer.java")) {
            lines.addAll(Files.readAllLines(Path.of(source)));
        }
        lines.addAll(List.of(WORLD));
        lines.addAll(List.of(SPECIAL_LOOKING));
        SplittableRandom random = new SplittableRandom(2026);
        String[] pieces = {
            " ",
            "  ",
            "   ",
            "\t",
            "\n",
            "\n\n",
            " \n ",
            "\r\n",
            "the",
            " the",
            "The",
            "token",
            "izer",
            "123",
            "4567",
            "3.14",
            "-",
            "_",
            "__init__",
            "'s",
            "'ll",
            "n't",
            "!",
            "?!",
            "...",
            "—",
            "“quoted”",
            "(",
            ")",
            "{",
            "}",
            "=>",
            "->",
            "::",
            "é",
            "ß",
            "日本",
            "語",
            "中文",
            "😀",
            "👍🏽",
            "ﬁ",
            "\u00a0",
            "\u2581",
            "<s>",
            "</s>"
        };
        String[] world = WORLD;
        while (lines.size() < minLines) {
            StringBuilder sb = new StringBuilder();
            int n = 1 + random.nextInt(12);
            for (int i = 0; i < n; i++) {
                sb.append(
                        random.nextInt(5) == 0
                                ? world[random.nextInt(world.length)]
                                : pieces[random.nextInt(pieces.length)]);
            }
            lines.add(sb.toString());
        }
        return lines;
    }
}
