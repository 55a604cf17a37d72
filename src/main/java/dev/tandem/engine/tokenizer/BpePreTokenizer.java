package dev.tandem.engine.tokenizer;

import static dev.tandem.engine.tokenizer.BpeCodepointFlags.LETTER;
import static dev.tandem.engine.tokenizer.BpeCodepointFlags.NUMBER;
import static dev.tandem.engine.tokenizer.BpeCodepointFlags.PUNCTUATION;
import static dev.tandem.engine.tokenizer.BpeCodepointFlags.WHITESPACE;
import static dev.tandem.engine.tokenizer.BpeCodepointFlags.has;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * llama.cpp's BPE pre-tokenizer ({@code unicode_regex_split} with the regexes {@code
 * llm_tokenizer_bpe} lists per {@code tokenizer.ggml.pre} type), splitting text into the words BPE
 * merges within. Each regex splits every piece the previous one produced; text between matches is
 * a piece of its own. The regexes llama.cpp runs as hand-written code (GPT-2, Llama 3, Qwen2) are
 * ported from that code, quirks included; the few it runs through {@code std::regex} are simple
 * character classes, matched here with the same category semantics.
 */
public final class BpePreTokenizer {
    /** {@code [\p{P}\$\+<=>\^~\|]+}: on the collapsed text \p{P} is exactly the punctuation flag. */
    private static final Regex PUNCT_RUNS = stl(run(punctuationOr("$+<=>^~|")));
    /** Falcon's {@code [\p{P}\$\+<=>\^~\|`]+}. */
    private static final Regex PUNCT_RUNS_FALCON = stl(run(punctuationOr("$+<=>^~|`")));

    private static final Match ONE_NUMBER = (p, pos) -> has(p.cptFlags[pos], NUMBER) ? pos + 1 : -1;
    private static final Regex NUMBER_RUNS = stl(run(ONE_NUMBER));
    private static final Regex EACH_NUMBER = stl(ONE_NUMBER);
    private static final Regex ASCII_TRIPLES = stl(BpePreTokenizer::asciiTriple);
    private static final Regex GPT2 = BpePreTokenizer::gpt2;
    private static final Regex LLAMA3 = p -> llama3(p, true);
    private static final Regex QWEN2 = p -> llama3(p, false);

    private static final Map<String, BpePreTokenizer> BY_NAME = new LinkedHashMap<>();

    static {
        // names and types as llama_vocab::impl::load maps them; ignore_merges only for LLAMA3
        register(List.of(PUNCT_RUNS, GPT2, NUMBER_RUNS, ASCII_TRIPLES), false, "default");
        register(List.of(PUNCT_RUNS_FALCON, GPT2, ASCII_TRIPLES), false, "falcon");
        register(List.of(LLAMA3), true, "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral");
        register(List.of(LLAMA3), true, "midm-2.0", "lfm2", "jina-v5-nano");
        register(List.of(LLAMA3), false, "dbrx", "smaug-bpe", "glm4", "chatglm-bpe");
        register(List.of(QWEN2), false, "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2");
        register(List.of(QWEN2), false, "hunyuan", "solar-open", "grok-2");
        register(List.of(EACH_NUMBER, GPT2), false, "smollm", "starcoder", "refact", "command-r", "codeshell");
        register(List.of(EACH_NUMBER, GPT2), false, "exaone", "minerva-7b", "mellum2");
        register(List.of(GPT2), false, "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es");
        register(List.of(GPT2), false, "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "jina-v1-en");
        register(List.of(GPT2), false, "jina-v2-code", "roberta-bpe", "exaone4", "mpt", "olmo", "jais");
        register(List.of(GPT2), false, "trillion", "granite-docling");
    }

    private final String name;
    private final List<Regex> regexes;
    private final boolean ignoreMerges;

    private BpePreTokenizer(String name, List<Regex> regexes, boolean ignoreMerges) {
        this.name = name;
        this.regexes = regexes;
        this.ignoreMerges = ignoreMerges;
    }

    private static void register(List<Regex> regexes, boolean ignoreMerges, String... names) {
        for (String name : names) {
            BY_NAME.put(name, new BpePreTokenizer(name, regexes, ignoreMerges));
        }
    }

    /**
     * By the GGUF {@code tokenizer.ggml.pre} name; a missing (null or empty) name is "default", as
     * in llama.cpp.
     *
     * @throws IllegalArgumentException for a name this port does not support, listing those it does
     */
    public static BpePreTokenizer named(String pre) {
        BpePreTokenizer found = BY_NAME.get(pre == null || pre.isEmpty() ? "default" : pre);
        if (found == null) {
            throw new IllegalArgumentException(
                    "unsupported BPE pre-tokenizer '" + pre + "'; supported: " + String.join(", ", BY_NAME.keySet()));
        }
        return found;
    }

    /** The words of {@code text} in order (raw text, not byte-level encoded); they concatenate to it. */
    public List<String> split(String text) {
        int[] cpts = text.codePoints().toArray(); // a lone surrogate stays one code point (Cs: control)
        int[] flags = Arrays.stream(cpts).map(BpeCodepointFlags::of).toArray();
        BpePiece.Offsets offsets = new BpePiece.Offsets();
        offsets.add(cpts.length);
        for (Regex regex : regexes) {
            BpePiece piece = new BpePiece(cpts, flags, new BpePiece.Offsets());
            int start = 0;
            for (int i = 0; i < offsets.size; i++) {
                piece.reset(start, start + offsets.lengths[i]);
                regex.split(piece);
                start += offsets.lengths[i];
            }
            offsets = piece.out;
        }
        List<String> words = new ArrayList<>(offsets.size);
        int from = 0;
        for (int i = 0; i < offsets.size; i++) {
            int to = text.offsetByCodePoints(from, offsets.lengths[i]); // lone surrogates count as one
            words.add(text.substring(from, to));
            from = to;
        }
        return words;
    }

    /** True when llama.cpp sets {@code ignore_merges}: a word that is itself a token is not merged. */
    public boolean ignoreMerges() {
        return ignoreMerges;
    }

    public String name() {
        return name;
    }

    /** unicode_regex_split_custom_gpt2, one piece of the offsets. */
    private static void gpt2(BpePiece p) {
        for (int pos = p.ini; pos < p.end; /* pos++ */ ) {
            final int cpt = p.cpt(pos);
            final int flags = p.flags(pos);

            // regex: 's|'t|'re|'ve|'m|'ll|'d
            int contraction = contraction(p, pos, false);
            if (contraction >= 0) {
                pos += p.addToken(contraction);
                continue;
            }

            int flags2 = cpt == ' ' ? p.flags(pos + 1) : flags;
            // regex: <space>?\p{L}+
            if (has(flags2, LETTER)) {
                pos += cpt == ' ' ? 1 : 0;
                while (has(flags2, LETTER)) {
                    flags2 = p.flags(++pos);
                }
                p.addToken(pos);
                continue;
            }
            // regex: <space>?\p{N}+
            if (has(flags2, NUMBER)) {
                pos += cpt == ' ' ? 1 : 0;
                while (has(flags2, NUMBER)) {
                    flags2 = p.flags(++pos);
                }
                p.addToken(pos);
                continue;
            }
            // regex: <space>?[^\s\p{L}\p{N}]+
            if (!has(flags2, WHITESPACE | LETTER | NUMBER) && flags2 != 0) {
                pos += cpt == ' ' ? 1 : 0;
                while (!has(flags2, WHITESPACE | LETTER | NUMBER) && flags2 != 0) {
                    flags2 = p.flags(++pos);
                }
                p.addToken(pos);
                continue;
            }

            pos = whitespace(p, pos, false);
        }
    }

    /** unicode_regex_split_custom_llama3 ({@code \p{N}{1,3}}) or _qwen2 ({@code \p{N}}), one piece. */
    private static void llama3(BpePiece p, boolean digitsInThrees) {
        for (int pos = p.ini; pos < p.end; /* pos++ */ ) {
            final int cpt = p.cpt(pos);
            final int flags = p.flags(pos);

            // regex: (?i:'s|'t|'re|'ve|'m|'ll|'d) // case insensitive
            int contraction = contraction(p, pos, true);
            if (contraction >= 0) {
                pos += p.addToken(contraction);
                continue;
            }

            // regex: [^\r\n\p{L}\p{N}]?\p{L}+
            if (!(cpt == '\r' || cpt == '\n' || has(flags, NUMBER))) {
                if (has(flags, LETTER) || has(p.flags(pos + 1), LETTER)) { // one or more letters
                    pos++;
                    while (has(p.flags(pos), LETTER)) {
                        pos++;
                    }
                    p.addToken(pos);
                    continue;
                }
            }

            // regex: \p{N}{1,3} (llama3) or \p{N} (qwen2)
            if (has(flags, NUMBER)) {
                if (digitsInThrees) {
                    int ini = pos;
                    while (has(p.flags(pos), NUMBER)) {
                        if (++pos - ini >= 3) {
                            p.addToken(pos);
                            ini = pos;
                        }
                    }
                } else {
                    pos++;
                }
                p.addToken(pos);
                continue;
            }

            // regex: <space>?[^\s\p{L}\p{N}]+[\r\n]*
            // (llama.cpp tests flags, not flags2, for "defined": a trailing lone space lands here)
            int flags2 = cpt == ' ' ? p.flags(pos + 1) : flags;
            if (!has(flags2, WHITESPACE | LETTER | NUMBER) && flags != 0) {
                pos += cpt == ' ' ? 1 : 0;
                while (!has(flags2, WHITESPACE | LETTER | NUMBER) && flags2 != 0) {
                    flags2 = p.flags(++pos);
                }
                int cpt2 = p.cpt(pos);
                while (cpt2 == '\r' || cpt2 == '\n') {
                    cpt2 = p.cpt(++pos);
                }
                p.addToken(pos);
                continue;
            }

            pos = whitespace(p, pos, true);
        }
    }

    /** The contraction alternatives: the end of {@code 's|'t|'re|'ve|'m|'ll|'d} at pos, or -1. */
    private static int contraction(BpePiece p, int pos, boolean ignoreCase) {
        if (p.cpt(pos) == '\'' && pos + 1 < p.end) {
            int cptNext = lower(p.cpt(pos + 1), ignoreCase);
            if (cptNext == 's' || cptNext == 't' || cptNext == 'm' || cptNext == 'd') {
                return pos + 2;
            }
            if (pos + 2 < p.end) {
                int cptNextNext = lower(p.cpt(pos + 2), ignoreCase);
                if ((cptNext == 'r' && cptNextNext == 'e')
                        || (cptNext == 'v' && cptNextNext == 'e')
                        || (cptNext == 'l' && cptNextNext == 'l')) {
                    return pos + 3;
                }
            }
        }
        return -1;
    }

    /** unicode_tolower; only compared with ASCII letters, which only A-Z lower-case to. */
    private static int lower(int cpt, boolean ignoreCase) {
        return ignoreCase ? Character.toLowerCase(cpt) : cpt;
    }

    /** The whitespace alternatives ending each custom splitter's loop; returns the next pos. */
    private static int whitespace(BpePiece p, int pos, boolean newlineRuns) {
        int numWhitespaces = 0;
        int lastEndROrN = 0;
        while (has(p.flags(pos + numWhitespaces), WHITESPACE)) {
            int cpt2 = p.cpt(pos + numWhitespaces);
            if (cpt2 == '\r' || cpt2 == '\n') {
                lastEndROrN = pos + numWhitespaces + 1;
            }
            numWhitespaces++;
        }
        // regex: \s*[\r\n]+ (llama3 and qwen2 only)
        if (newlineRuns && lastEndROrN > 0) {
            pos = lastEndROrN;
            p.addToken(pos);
            return pos;
        }
        // regex: \s+(?!\S)
        if (numWhitespaces > 1 && p.cpt(pos + numWhitespaces) != BpePiece.OUT_OF_RANGE) {
            pos += numWhitespaces - 1;
            p.addToken(pos);
            return pos;
        }
        // regex: \s+
        if (numWhitespaces > 0) {
            pos += numWhitespaces;
            p.addToken(pos);
            return pos;
        }
        // no matches
        p.addToken(++pos);
        return pos;
    }

    /** One code point of {@code [\p{P}extra]}. */
    private static Match punctuationOr(String extra) {
        return (p, pos) -> has(p.cptFlags[pos], PUNCTUATION) || extra.indexOf(p.cpts[pos]) >= 0 ? pos + 1 : -1;
    }

    /** {@code [0-9][0-9][0-9]}: std::wregex on the raw code points, so ASCII digits only. */
    private static int asciiTriple(BpePiece p, int pos) {
        for (int i = pos; i < pos + 3; i++) {
            if (i >= p.end || p.cpts[i] < '0' || p.cpts[i] > '9') {
                return -1;
            }
        }
        return pos + 3;
    }

    /** {@code [class]+} for a one-code-point class: the end of the longest run at pos, or -1. */
    private static Match run(Match one) {
        return (p, pos) -> {
            int end = pos;
            while (end < p.end && one.end(p, end) > 0) {
                end++;
            }
            return end > pos ? end : -1;
        };
    }

    /**
     * unicode_regex_split_stl: leftmost matches in turn (std::regex_iterator), the text before
     * each and after the last kept as pieces. None of these regexes matches the empty string.
     */
    private static Regex stl(Match match) {
        return p -> {
            int startIdx = p.ini;
            for (int pos = p.ini; pos < p.end; ) {
                int end = match.end(p, pos);
                if (end < 0) {
                    pos++;
                    continue;
                }
                if (pos > startIdx) {
                    p.out.add(pos - startIdx);
                }
                p.out.add(end - pos);
                startIdx = pos = end;
            }
            if (startIdx < p.end) {
                p.out.add(p.end - startIdx);
            }
        };
    }

    /** One of a type's regexes, applied to one piece of the previous regex's offsets. */
    @FunctionalInterface
    private interface Regex {
        void split(BpePiece piece);
    }

    /** A pattern anchored at pos: the end of its match, or -1. */
    @FunctionalInterface
    private interface Match {
        int end(BpePiece piece, int pos);
    }
}
