package dev.tandem.engine.tokenizer;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Hugging Face {@code tokenizer.json} BPE tokenizer: byte-level (GPT-2, Llama 3, Qwen2: every token
 * spells bytes in GPT-2's alphabet) or SentencePiece-style ({@code ▁} for spaces, {@code <0xNN>}
 * byte-fallback tokens: Llama 2, Mistral). {@link #decode} gives a token's exact bytes, which may be
 * part of a UTF-8 character: {@link TextStreamDecoder} assembles characters across tokens. Special
 * added tokens contribute no bytes, as servers stream text with {@code skip_special_tokens}.
 *
 * <p>{@link #encode} splits out added tokens, normalizes, pre-tokenizes ({@link BpeSplitter}) and
 * merges ({@link BpeMerges}) as the {@code tokenizers} library does for these models.
 */
public final class BpeTokenizer implements Tokenizer {
    private static final Pattern BYTE_TOKEN = Pattern.compile("<0x([0-9A-Fa-f]{2})>");

    private final byte[][] bytes;
    private final Map<String, Integer> ids;
    private final BpeMerges merges;
    private final BpeSplitter splitter;
    private final Pattern addedTokens; // null when there are none
    private final Map<String, Integer> addedIds;
    private final int[] byteFallback; // byte value → id of <0xNN>, or null
    private final int unk;
    private final boolean ignoreMerges;
    private final boolean stripFirstSpace;
    private final int bos;
    private final int eos;
    private final int maxTokenBytes;

    private BpeTokenizer(TokenizerJson json, BpeMerges merges, byte[][] bytes, int eos, String source)
            throws IOException {
        this.bytes = bytes;
        this.ids = json.vocab;
        this.merges = merges;
        this.splitter = BpeSplitter.of(json.normalizer, json.preTokenizer);
        this.addedIds = new HashMap<>();
        json.added.forEach(a -> addedIds.put(a.content(), a.id()));
        this.addedTokens = addedIds.isEmpty() ? null : alternation(addedIds.keySet());
        this.byteFallback = json.byteFallback ? byteTokens(json.vocab) : null;
        this.unk = json.unkToken == null ? -1 : json.vocab.getOrDefault(json.unkToken, -1);
        this.ignoreMerges = json.ignoreMerges;
        this.stripFirstSpace = stripsFirstSpace(json.decoder);
        this.bos = bos(json.postProcessor, addedIds, json.vocab);
        this.eos = eos;
        this.maxTokenBytes = Arrays.stream(bytes).mapToInt(b -> b.length).max().orElse(1);
        if (!json.byteFallback && !splitter.byteLevel() && unk < 0) {
            throw new IOException(source + ": neither byte-level, nor byte fallback, nor an unk token");
        }
    }

    /**
     * Loads {@code tokenizer.json}, or a model directory's (with the end-of-sequence token of its
     * {@code tokenizer_config.json}, when it has one).
     */
    public static BpeTokenizer load(Path fileOrDirectory) throws IOException {
        Path file = Files.isDirectory(fileOrDirectory) ? fileOrDirectory.resolve("tokenizer.json") : fileOrDirectory;
        TokenizerJson json;
        try (InputStream in = Files.newInputStream(file)) {
            json = TokenizerJson.read(in, file.toString());
        }
        Path dir = file.toAbsolutePath().getParent();
        String eos;
        try {
            eos = dir == null ? null : TokenizerConfig.in(dir).specialToken("eos_token");
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        return of(json, eos, file.toString());
    }

    /** Reads a {@code tokenizer.json}; {@code eosToken} (or null) names the end-of-sequence token. */
    public static BpeTokenizer read(InputStream in, String eosToken, String source) throws IOException {
        return of(TokenizerJson.read(in, source), eosToken, source);
    }

    private static BpeTokenizer of(TokenizerJson json, String eosToken, String source) throws IOException {
        if (!"BPE".equals(json.modelType)) {
            throw new IOException(source + ": model type " + json.modelType + ", only BPE is supported");
        }
        int size = 0;
        for (int id : json.vocab.values()) {
            size = Math.max(size, id + 1);
        }
        for (TokenizerJson.AddedToken a : json.added) {
            size = Math.max(size, a.id() + 1);
        }
        byte[][] bytes = tokenBytes(json, size);
        BpeMerges merges = mergeTable(json, source);
        Integer eos = eosToken == null ? null : json.vocab.get(eosToken);
        for (TokenizerJson.AddedToken a : json.added) {
            if (a.content().equals(eosToken)) {
                eos = a.id();
            }
        }
        return new BpeTokenizer(json, merges, bytes, eos == null ? -1 : eos, source);
    }

    /** Each token's bytes, as the file's decoder produces them. */
    private static byte[][] tokenBytes(TokenizerJson json, int size) {
        boolean byteLevel = decoderHas(json.decoder, "ByteLevel");
        byte[][] bytes = new byte[size][];
        Arrays.fill(bytes, new byte[0]);
        for (Map.Entry<String, Integer> e : json.vocab.entrySet()) {
            bytes[e.getValue()] = byteLevel ? byteLevel(e.getKey()) : sentencePiece(e.getKey(), json.byteFallback);
        }
        for (TokenizerJson.AddedToken a : json.added) {
            bytes[a.id()] = a.special() ? new byte[0] : a.content().getBytes(StandardCharsets.UTF_8);
        }
        return bytes;
    }

    /** A character outside GPT-2's alphabet stands for its own UTF-8, as the library's decoder has it. */
    private static byte[] byteLevel(String token) {
        byte[] b = ByteLevelAlphabet.bytes(token);
        if (b != null) {
            return b;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        token.codePoints().forEach(cp -> {
            byte[] one = ByteLevelAlphabet.bytes(Character.toString(cp));
            out.writeBytes(one != null ? one : Character.toString(cp).getBytes(StandardCharsets.UTF_8));
        });
        return out.toByteArray();
    }

    private static byte[] sentencePiece(String token, boolean byteFallback) {
        Matcher m = BYTE_TOKEN.matcher(token);
        if (byteFallback && m.matches()) {
            return new byte[] {(byte) Integer.parseInt(m.group(1), 16)};
        }
        return token.replace('\u2581', ' ').getBytes(StandardCharsets.UTF_8);
    }

    private static BpeMerges mergeTable(TokenizerJson json, String source) throws IOException {
        int n = json.mergeLeft.size();
        int[] left = new int[n];
        int[] right = new int[n];
        int[] merged = new int[n];
        for (int r = 0; r < n; r++) {
            String a = json.mergeLeft.get(r);
            String b = json.mergeRight.get(r);
            Integer l = json.vocab.get(a);
            Integer rt = json.vocab.get(b);
            Integer m = json.vocab.get(a + b);
            if (l == null || rt == null || m == null) {
                throw new IOException(source + ": merge " + r + " (" + a + " " + b + ") is not in the vocabulary");
            }
            left[r] = l;
            right[r] = rt;
            merged[r] = m;
        }
        json.mergeLeft.clear(); // the strings are no longer needed: let them go before the tokenizer lives on
        json.mergeRight.clear();
        return new BpeMerges(left, right, merged);
    }

    @Override
    public int vocabSize() {
        return bytes.length;
    }

    @Override
    public int bos() {
        return bos;
    }

    @Override
    public int eos() {
        return eos;
    }

    @Override
    public int maxTokenBytes() {
        return Math.max(maxTokenBytes, 1);
    }

    @Override
    public boolean isEndOfSequence(int token) {
        return token == eos && eos >= 0;
    }

    /** A token's bytes; after BOS a SentencePiece-style model's leading space is dropped, as its decoder does. */
    @Override
    public byte[] decode(int previousToken, int token) {
        if (token < 0 || token >= bytes.length) {
            throw new IllegalArgumentException("token " + token + " outside vocabulary [0, " + bytes.length + ")");
        }
        byte[] b = bytes[token];
        if (stripFirstSpace && previousToken == bos && b.length > 0 && b[0] == ' ') {
            return Arrays.copyOfRange(b, 1, b.length);
        }
        return b.clone();
    }

    /** Every token's bytes (as after any token but BOS), indexed by id. */
    public byte[][] pieces() {
        byte[][] out = new byte[bytes.length][];
        for (int i = 0; i < out.length; i++) {
            out[i] = bytes[i].clone();
        }
        return out;
    }

    @Override
    public int[] encode(String text, boolean addBos) {
        List<Integer> out = new ArrayList<>();
        if (addBos && bos >= 0) {
            out.add(bos);
        }
        int at = 0;
        boolean first = true;
        if (addedTokens != null) {
            Matcher m = addedTokens.matcher(text);
            while (m.find()) {
                encodeStretch(text.substring(at, m.start()), first, out);
                out.add(addedIds.get(m.group()));
                first = false;
                at = m.end();
            }
        }
        encodeStretch(text.substring(at), first, out);
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private void encodeStretch(String text, boolean first, List<Integer> out) {
        if (text.isEmpty()) {
            return;
        }
        for (String word : splitter.words(text, first)) {
            Integer whole = ignoreMerges ? ids.get(word) : null;
            if (whole != null) {
                out.add(whole);
                continue;
            }
            int[] symbols = symbols(word);
            int n = merges.merge(symbols, symbols.length);
            for (int i = 0; i < n; i++) {
                out.add(symbols[i]);
            }
        }
    }

    /** A word's characters as tokens: byte-fallback tokens or unk for a character the vocabulary lacks. */
    private int[] symbols(String word) {
        int[] out = new int[word.length() * 4];
        int n = 0;
        for (int i = 0; i < word.length(); ) {
            int cp = word.codePointAt(i);
            String c = word.substring(i, i + Character.charCount(cp));
            i += c.length();
            Integer id = ids.get(c);
            if (id != null) {
                out[n++] = id;
            } else if (byteFallback != null) {
                for (byte b : c.getBytes(StandardCharsets.UTF_8)) {
                    out[n++] = byteFallback[b & 0xFF];
                }
            } else if (unk >= 0) {
                out[n++] = unk;
            } else {
                throw new IllegalArgumentException(
                        "character U+" + Integer.toHexString(cp) + " is not in the vocabulary");
            }
        }
        return Arrays.copyOf(out, n);
    }

    /**
     * Per token: its bytes (16 + length), its vocabulary entry (a String of 40 + its chars, a HashMap
     * node with a boxed id and table slots: about 64 bytes); and the merge table.
     */
    @Override
    public long footprintBytes() {
        long total = 16L + 8L * bytes.length + merges.footprintBytes();
        for (byte[] b : bytes) {
            total += 16 + b.length;
        }
        for (String token : ids.keySet()) {
            total += 40 + 2L * token.length() + 64;
        }
        return total;
    }

    private static Pattern alternation(java.util.Collection<String> contents) {
        List<String> sorted = new ArrayList<>(contents);
        sorted.sort(Comparator.comparingInt(String::length).reversed()); // the longest of overlapping tokens wins
        StringBuilder regex = new StringBuilder();
        for (String s : sorted) {
            regex.append(regex.isEmpty() ? "" : "|").append(Pattern.quote(s));
        }
        return Pattern.compile(regex.toString());
    }

    private static int[] byteTokens(Map<String, Integer> vocab) {
        int[] out = new int[256];
        for (int b = 0; b < 256; b++) {
            Integer id = vocab.get(String.format("<0x%02X>", b));
            out[b] = id == null ? vocab.getOrDefault("<unk>", 0) : id;
        }
        return out;
    }

    private static boolean decoderHas(JsonTree decoder, String type) {
        if (decoder == null) {
            return false;
        }
        if (type.equals(decoder.getString("type"))) {
            return true;
        }
        for (Object o : decoder.getJsonArray("decoders", List.of())) {
            if (decoderHas((JsonTree) o, type)) {
                return true;
            }
        }
        return false;
    }

    /** A {@code Strip} of a leading space, or a {@code Metaspace} decoder that prepends: llama2.c's rule too. */
    private static boolean stripsFirstSpace(JsonTree decoder) {
        if (decoder == null) {
            return false;
        }
        String type = decoder.getString("type", "");
        if (type.equals("Strip")) {
            return decoder.getInteger("start", 0) > 0;
        }
        if (type.equals("Metaspace")) {
            return !"never".equals(decoder.getString("prepend_scheme", "always"))
                    && decoder.getBoolean("add_prefix_space", true);
        }
        for (Object o : decoder.getJsonArray("decoders", List.of())) {
            if (stripsFirstSpace((JsonTree) o)) {
                return true;
            }
        }
        return false;
    }

    /** The special token a {@code TemplateProcessing} post-processor puts before a single text, or -1. */
    private static int bos(JsonTree post, Map<String, Integer> added, Map<String, Integer> vocab) {
        if (post == null) {
            return -1;
        }
        if ("Sequence".equals(post.getString("type"))) {
            for (Object o : post.getJsonArray("processors", List.of())) {
                int id = bos((JsonTree) o, added, vocab);
                if (id >= 0) {
                    return id;
                }
            }
            return -1;
        }
        List<Object> single = post.getJsonArray("single");
        if (!"TemplateProcessing".equals(post.getString("type")) || single == null || single.isEmpty()) {
            return -1;
        }
        JsonTree special = single.get(0) instanceof JsonTree first ? first.getJsonObject("SpecialToken") : null;
        if (special == null) {
            return -1;
        }
        String name = special.getString("id");
        return added.getOrDefault(name, vocab.getOrDefault(name, -1));
    }
}
