package dev.tandem.engine.tokenizer;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte-level BPE {@code tokenizer.json} files written by the tests themselves (no download), laid out
 * as Llama 3's: its Split regex and a {@code ByteLevel} pre-tokenizer without a regex, a
 * {@code ByteLevel} decoder, {@code <|begin_of_text|>} put first by a template, special tokens after the
 * vocabulary. {@link #trained} learns merges from a corpus as BPE training does (most frequent pair
 * first), so multi-byte characters split across tokens where the corpus made them; {@link #large}
 * grows a vocabulary of Llama 3's size from seeded random merges.
 */
public final class BpeVocabularies {
    /** Llama 3's pre-tokenizer pattern, as its tokenizer.json ships it. */
    public static final String LLAMA3_PATTERN =
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                    + "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    public static final String BOS = "<|begin_of_text|>";
    public static final String EOT = "<|eot_id|>";

    private BpeVocabularies() {}

    /** A vocabulary of the 256 bytes and {@code merges} merges learned from {@code corpus}. */
    public static String trained(String corpus, int merges) {
        Map<List<String>, Integer> words = new HashMap<>();
        Matcher m =
                Pattern.compile(LLAMA3_PATTERN, Pattern.UNICODE_CHARACTER_CLASS).matcher(corpus);
        while (m.find()) {
            byte[] b = m.group().getBytes(StandardCharsets.UTF_8);
            List<String> symbols = new ArrayList<>();
            for (int i = 0; i < b.length; i++) {
                symbols.add(ByteLevelAlphabet.spell(b, i, i + 1));
            }
            words.merge(symbols, 1, Integer::sum);
        }
        Map<String, Integer> vocab = byteVocab();
        List<String[]> learned = new ArrayList<>();
        for (int k = 0; k < merges; k++) {
            TreeMap<String, Integer> counts = new TreeMap<>(); // sorted, so ties break the same way every run
            words.forEach((w, n) -> {
                for (int i = 0; i + 1 < w.size(); i++) {
                    counts.merge(w.get(i) + " " + w.get(i + 1), n, Integer::sum);
                }
            });
            if (counts.isEmpty()) {
                break;
            }
            String best = counts.entrySet().stream()
                    .max(Map.Entry.comparingByValue())
                    .orElseThrow()
                    .getKey();
            String[] pair = best.split(" ");
            learned.add(pair);
            vocab.putIfAbsent(pair[0] + pair[1], vocab.size());
            Map<List<String>, Integer> next = new HashMap<>();
            words.forEach((w, n) -> next.merge(apply(w, pair), n, Integer::sum));
            words = next;
        }
        return json(vocab, learned, false).encode();
    }

    /**
     * A file of {@code size} tokens (256 of them special, as Llama 3's 128,256) and about 2.2 merges
     * per token (Llama 3 has 280k): each new token joins two earlier ones, and longer tokens get their
     * other splits as merges too, as a tiktoken vocabulary converted to BPE does. Merges as pairs.
     */
    public static Path large(Path dir, int size, long seed) {
        Random random = new Random(seed);
        Map<String, Integer> vocab = byteVocab();
        List<String> tokens = new ArrayList<>(vocab.keySet());
        List<String[]> merges = new ArrayList<>();
        while (vocab.size() < size - 256) {
            String a = tokens.get(random.nextInt(tokens.size()));
            String b = tokens.get(random.nextInt(Math.min(tokens.size(), 4096)));
            if (a.length() + b.length() > 16 || vocab.containsKey(a + b)) {
                continue;
            }
            vocab.put(a + b, vocab.size());
            tokens.add(a + b);
            merges.add(new String[] {a, b});
            String ab = a + b;
            for (int cut = 1; cut < ab.length() && merges.size() < 2.2 * vocab.size(); cut++) {
                if (cut != a.length()
                        && vocab.containsKey(ab.substring(0, cut))
                        && vocab.containsKey(ab.substring(cut))) {
                    merges.add(new String[] {ab.substring(0, cut), ab.substring(cut)});
                }
            }
        }
        Path file = dir.resolve("tokenizer.json");
        try {
            Files.writeString(file, json(vocab, merges, true).encode());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    private static Map<String, Integer> byteVocab() {
        Map<String, Integer> vocab = new LinkedHashMap<>();
        byte[] all = new byte[256];
        for (int b = 0; b < 256; b++) {
            all[b] = (byte) b;
        }
        for (int b = 0; b < 256; b++) {
            vocab.put(ByteLevelAlphabet.spell(all, b, b + 1), b);
        }
        return vocab;
    }

    private static List<String> apply(List<String> w, String[] pair) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < w.size(); i++) {
            if (i + 1 < w.size() && w.get(i).equals(pair[0]) && w.get(i + 1).equals(pair[1])) {
                out.add(pair[0] + pair[1]);
                i++;
            } else {
                out.add(w.get(i));
            }
        }
        return out;
    }

    private static JsonObject json(Map<String, Integer> vocab, List<String[]> merges, boolean pairs) {
        int base = vocab.size();
        JsonArray added = new JsonArray();
        List<String> specials = new ArrayList<>(List.of(BOS, "<|end_of_text|>", EOT));
        while (pairs && specials.size() < 256) {
            specials.add("<|reserved_special_token_" + specials.size() + "|>");
        }
        for (int i = 0; i < specials.size(); i++) {
            added.add(new JsonObject()
                    .put("id", base + i)
                    .put("content", specials.get(i))
                    .put("single_word", false)
                    .put("normalized", false)
                    .put("special", true));
        }
        JsonArray mergeArray = new JsonArray();
        merges.forEach(p -> mergeArray.add(pairs ? new JsonArray().add(p[0]).add(p[1]) : p[0] + " " + p[1]));
        JsonObject vocabJson = new JsonObject();
        vocab.forEach(vocabJson::put);
        return new JsonObject()
                .put("version", "1.0")
                .putNull("truncation")
                .putNull("padding")
                .put("added_tokens", added)
                .putNull("normalizer")
                .put(
                        "pre_tokenizer",
                        new JsonObject()
                                .put("type", "Sequence")
                                .put(
                                        "pretokenizers",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("type", "Split")
                                                        .put("pattern", new JsonObject().put("Regex", LLAMA3_PATTERN))
                                                        .put("behavior", "Isolated")
                                                        .put("invert", false))
                                                .add(new JsonObject()
                                                        .put("type", "ByteLevel")
                                                        .put("add_prefix_space", false)
                                                        .put("trim_offsets", true)
                                                        .put("use_regex", false))))
                .put(
                        "post_processor",
                        new JsonObject()
                                .put("type", "TemplateProcessing")
                                .put(
                                        "single",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put(
                                                                "SpecialToken",
                                                                new JsonObject()
                                                                        .put("id", BOS)
                                                                        .put("type_id", 0)))
                                                .add(new JsonObject()
                                                        .put(
                                                                "Sequence",
                                                                new JsonObject()
                                                                        .put("id", "A")
                                                                        .put("type_id", 0)))))
                .put(
                        "decoder",
                        new JsonObject()
                                .put("type", "ByteLevel")
                                .put("add_prefix_space", true)
                                .put("trim_offsets", true)
                                .put("use_regex", true))
                .put(
                        "model",
                        new JsonObject()
                                .put("type", "BPE")
                                .putNull("dropout")
                                .putNull("unk_token")
                                .putNull("continuing_subword_prefix")
                                .putNull("end_of_word_suffix")
                                .put("fuse_unk", false)
                                .put("byte_fallback", false)
                                .put("ignore_merges", true)
                                .put("vocab", vocabJson)
                                .put("merges", mergeArray));
    }
}
