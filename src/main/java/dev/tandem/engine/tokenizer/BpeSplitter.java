package dev.tandem.engine.tokenizer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A {@code tokenizer.json}'s normalizer and pre-tokenizer: turns a stretch of text (between added
 * tokens) into the words BPE merges within, spelled in the vocabulary's alphabet (GPT-2's byte
 * alphabet after {@code ByteLevel}, {@code ▁} for spaces after {@code Metaspace}). Supports what
 * GPT-2, Llama 2/3, Mistral and Qwen2 ship; any other component is refused when the file is loaded
 * rather than encoded differently from the model's own tokenizer.
 */
final class BpeSplitter {
    /** GPT-2's pre-tokenizer pattern, which {@code ByteLevel} applies when {@code use_regex} is set. */
    static final String GPT2_PATTERN =
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

    private static final String METASPACE = "\u2581";

    /** One pre-tokenizer: pieces in, pieces out; {@code first} is true for the text's first stretch. */
    @FunctionalInterface
    private interface Step {
        void apply(String piece, boolean first, List<String> out);
    }

    private final UnaryOperator<String> normalizer;
    private final List<Step> steps;
    private final boolean byteLevel;

    private BpeSplitter(UnaryOperator<String> normalizer, List<Step> steps, boolean byteLevel) {
        this.normalizer = normalizer;
        this.steps = steps;
        this.byteLevel = byteLevel;
    }

    static BpeSplitter of(JsonTree normalizer, JsonTree preTokenizer) throws IOException {
        List<Step> steps = new ArrayList<>();
        boolean byteLevel = preTokenizer != null && addSteps(preTokenizer, steps);
        return new BpeSplitter(normalizer(normalizer), steps, byteLevel);
    }

    /** True when the pre-tokenizer maps text to the byte-level alphabet. */
    boolean byteLevel() {
        return byteLevel;
    }

    /** The words of one stretch of text, in the vocabulary's alphabet. */
    List<String> words(String text, boolean first) {
        List<String> pieces = List.of(normalizer.apply(text));
        for (Step step : steps) {
            List<String> next = new ArrayList<>();
            for (String piece : pieces) {
                step.apply(piece, first, next);
            }
            pieces = next;
        }
        return pieces;
    }

    private static UnaryOperator<String> normalizer(JsonTree n) throws IOException {
        if (n == null) {
            return UnaryOperator.identity();
        }
        String type = n.getString("type", "");
        return switch (type) {
            case "Sequence" -> {
                UnaryOperator<String> all = UnaryOperator.identity();
                for (Object o : n.getJsonArray("normalizers", List.of())) {
                    UnaryOperator<String> before = all;
                    UnaryOperator<String> next = normalizer((JsonTree) o);
                    all = s -> next.apply(before.apply(s));
                }
                yield all;
            }
            case "NFC" -> s -> Normalizer.normalize(s, Normalizer.Form.NFC);
            case "NFD" -> s -> Normalizer.normalize(s, Normalizer.Form.NFD);
            case "NFKC" -> s -> Normalizer.normalize(s, Normalizer.Form.NFKC);
            case "NFKD" -> s -> Normalizer.normalize(s, Normalizer.Form.NFKD);
            case "Lowercase" -> s -> s.toLowerCase(Locale.ROOT);
            case "Prepend" -> {
                String prefix = n.getString("prepend", "");
                yield s -> s.isEmpty() ? s : prefix + s;
            }
            case "Replace" -> {
                Pattern pattern = pattern(n.getJsonObject("pattern"));
                String content = Matcher.quoteReplacement(n.getString("content", ""));
                yield s -> pattern.matcher(s).replaceAll(content);
            }
            default -> throw new IOException("tokenizer.json: normalizer " + type + " is not supported");
        };
    }

    /** Adds the steps of a pre-tokenizer; true when it includes the byte-level mapping. */
    private static boolean addSteps(JsonTree p, List<Step> steps) throws IOException {
        String type = p.getString("type", "");
        switch (type) {
            case "Sequence" -> {
                boolean byteLevel = false;
                for (Object o : p.getJsonArray("pretokenizers", List.of())) {
                    byteLevel |= addSteps((JsonTree) o, steps);
                }
                return byteLevel;
            }
            case "Split" -> {
                if (p.getBoolean("invert", false)) {
                    throw new IOException("tokenizer.json: an inverted Split pre-tokenizer is not supported");
                }
                steps.add(split(pattern(p.getJsonObject("pattern")), p.getString("behavior", "Isolated")));
                return false;
            }
            case "Digits" -> {
                String digits = p.getBoolean("individual_digits", false) ? "\\p{N}" : "\\p{N}+";
                steps.add(split(Pattern.compile(digits), "Isolated"));
                return false;
            }
            case "ByteLevel" -> {
                addByteLevel(p, steps);
                return true;
            }
            case "Metaspace" -> {
                steps.add(metaspace(p));
                if (p.getBoolean("split", true)) {
                    steps.add(split(Pattern.compile(METASPACE), "MergedWithNext"));
                }
                return false;
            }
            default -> throw new IOException("tokenizer.json: pre-tokenizer " + type + " is not supported");
        }
    }

    private static void addByteLevel(JsonTree p, List<Step> steps) throws IOException {
        if (p.getBoolean("add_prefix_space", false)) {
            steps.add((piece, first, out) -> out.add(first && !piece.startsWith(" ") ? " " + piece : piece));
        }
        if (p.getBoolean("use_regex", true)) {
            steps.add(split(Pattern.compile(GPT2_PATTERN, Pattern.UNICODE_CHARACTER_CLASS), "Isolated"));
        }
        steps.add((piece, first, out) -> {
            byte[] bytes = piece.getBytes(StandardCharsets.UTF_8);
            out.add(ByteLevelAlphabet.spell(bytes, 0, bytes.length));
        });
    }

    /** Spaces become {@code ▁}, with one put first as the scheme says ({@code always}, {@code first}, {@code never}). */
    private static Step metaspace(JsonTree p) {
        String replacement = p.getString("replacement", METASPACE);
        String scheme = p.getString("prepend_scheme", p.getBoolean("add_prefix_space", true) ? "always" : "never");
        return (piece, first, out) -> {
            String s = piece.replace(" ", replacement);
            boolean prepend = "always".equals(scheme) || ("first".equals(scheme) && first);
            out.add(prepend && !s.startsWith(replacement) ? replacement + s : s);
        };
    }

    /** HF's split behaviors: a match stands alone, is dropped, or joins the piece before or after it. */
    private static Step split(Pattern pattern, String behavior) throws IOException {
        if (!List.of("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext")
                .contains(behavior)) {
            throw new IOException("tokenizer.json: Split behavior " + behavior + " is not supported");
        }
        return (piece, first, out) -> {
            Matcher m = pattern.matcher(piece);
            int at = 0;
            StringBuilder pending = new StringBuilder(); // MergedWithNext: a match waiting for what follows
            while (m.find()) {
                if (m.end() == m.start()) {
                    continue;
                }
                String gap = pending + piece.substring(at, m.start());
                pending.setLength(0);
                switch (behavior) {
                    case "Isolated" -> {
                        addNonEmpty(out, gap);
                        out.add(m.group());
                    }
                    case "Removed" -> addNonEmpty(out, gap);
                    case "MergedWithPrevious" -> out.add(gap + m.group());
                    default -> {
                        addNonEmpty(out, gap);
                        pending.append(m.group());
                    }
                }
                at = m.end();
            }
            addNonEmpty(out, pending + piece.substring(at));
        };
    }

    private static void addNonEmpty(List<String> out, String s) {
        if (!s.isEmpty()) {
            out.add(s);
        }
    }

    /** A {@code {"String": s}} or {@code {"Regex": r}} pattern; Unicode classes as Rust's regex has them. */
    private static Pattern pattern(JsonTree p) throws IOException {
        if (p == null) {
            throw new IOException("tokenizer.json: a Split or Replace without a pattern");
        }
        if (p.containsKey("String")) {
            return Pattern.compile(Pattern.quote(p.getString("String")));
        }
        try {
            return Pattern.compile(p.getString("Regex", ""), Pattern.UNICODE_CHARACTER_CLASS);
        } catch (PatternSyntaxException e) {
            throw new IOException("tokenizer.json: a pattern Java cannot compile: " + e.getMessage(), e);
        }
    }
}
