package dev.tandem.engine.tokenizer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a Hugging Face {@code tokenizer.json} holds, read in one streaming pass: the model's vocabulary
 * and merges (the bulk: Llama 3's are 128k tokens and 280k merges, so no tree of JSON nodes is built
 * for them), the added tokens, and the small normalizer, pre-tokenizer, post-processor and decoder
 * objects as they are. Merges come as {@code "a b"} strings (older files) or {@code ["a", "b"]} pairs.
 */
final class TokenizerJson {
    private static final JsonFactory JSON = new JsonFactory();

    /** An entry of {@code added_tokens}: special ones are control tokens with no text of their own. */
    record AddedToken(int id, String content, boolean special) {}

    String modelType = "";
    final Map<String, Integer> vocab = new HashMap<>();
    /** Left and right halves of each merge, in rank order. */
    final List<String> mergeLeft = new ArrayList<>();

    final List<String> mergeRight = new ArrayList<>();
    final List<AddedToken> added = new ArrayList<>();
    boolean byteFallback;
    boolean ignoreMerges;
    String unkToken;
    JsonTree normalizer;
    JsonTree preTokenizer;
    JsonTree postProcessor;
    JsonTree decoder;

    static TokenizerJson read(InputStream in, String source) throws IOException {
        TokenizerJson t = new TokenizerJson();
        try (JsonParser p = JSON.createParser(in)) {
            expect(p.nextToken(), JsonToken.START_OBJECT, source);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "model" -> t.readModel(p, source);
                    case "added_tokens" -> t.readAdded(p, source);
                    case "normalizer" -> t.normalizer = subtree(p);
                    case "pre_tokenizer" -> t.preTokenizer = subtree(p);
                    case "post_processor" -> t.postProcessor = subtree(p);
                    case "decoder" -> t.decoder = subtree(p);
                    default -> p.skipChildren();
                }
                if (value == null) {
                    throw new IOException(source + ": truncated JSON");
                }
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException(source + ": not a tokenizer.json: " + e.getOriginalMessage(), e);
        }
        if (t.vocab.isEmpty()) {
            throw new IOException(source + ": a tokenizer.json without a model vocabulary");
        }
        return t;
    }

    private void readModel(JsonParser p, String source) throws IOException {
        expect(p.currentToken(), JsonToken.START_OBJECT, source + " model");
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            switch (field) {
                case "type" -> modelType = p.getText();
                case "byte_fallback" -> byteFallback = value == JsonToken.VALUE_TRUE;
                case "ignore_merges" -> ignoreMerges = value == JsonToken.VALUE_TRUE;
                case "unk_token" -> unkToken = value == JsonToken.VALUE_NULL ? null : p.getText();
                case "continuing_subword_prefix", "end_of_word_suffix" -> {
                    if (value != JsonToken.VALUE_NULL && !p.getText().isEmpty()) {
                        throw new IOException(source + ": BPE with a " + field + " is not supported");
                    }
                }
                case "vocab" -> readVocab(p, source);
                case "merges" -> readMerges(p, source);
                default -> p.skipChildren();
            }
        }
    }

    private void readVocab(JsonParser p, String source) throws IOException {
        expect(p.currentToken(), JsonToken.START_OBJECT, source + " vocab");
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String token = p.currentName();
            expect(p.nextToken(), JsonToken.VALUE_NUMBER_INT, source + " vocab entry " + token);
            vocab.put(token, p.getIntValue());
        }
    }

    private void readMerges(JsonParser p, String source) throws IOException {
        expect(p.currentToken(), JsonToken.START_ARRAY, source + " merges");
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
            if (t == JsonToken.VALUE_STRING) {
                String merge = p.getText();
                int space = merge.indexOf(' ', 1); // a half is never empty, and byte-level halves hold no space
                if (space < 0 || merge.indexOf(' ', space + 1) >= 0) {
                    throw new IOException(source + ": merge '" + merge + "' is not two tokens");
                }
                mergeLeft.add(merge.substring(0, space));
                mergeRight.add(merge.substring(space + 1));
            } else if (t == JsonToken.START_ARRAY) {
                expect(p.nextToken(), JsonToken.VALUE_STRING, source + " merge");
                mergeLeft.add(p.getText());
                expect(p.nextToken(), JsonToken.VALUE_STRING, source + " merge");
                mergeRight.add(p.getText());
                expect(p.nextToken(), JsonToken.END_ARRAY, source + " merge of two tokens");
            } else {
                throw new IOException(source + ": a merge is neither \"a b\" nor [a, b]");
            }
        }
    }

    private void readAdded(JsonParser p, String source) throws IOException {
        expect(p.currentToken(), JsonToken.START_ARRAY, source + " added_tokens");
        while (p.nextToken() == JsonToken.START_OBJECT) {
            JsonTree o = subtree(p);
            Integer id = o.getInteger("id");
            String content = o.getString("content");
            if (id == null || content == null) {
                throw new IOException(source + ": an added token without id or content: " + o);
            }
            added.add(new AddedToken(id, content, o.getBoolean("special", false)));
        }
    }

    /** The object (or null) the parser is at, as a Vert.x JSON object. */
    private static JsonTree subtree(JsonParser p) throws IOException {
        return JsonTree.value(p) instanceof JsonTree t ? t : null;
    }

    private static void expect(JsonToken actual, JsonToken expected, String what) throws IOException {
        if (actual != expected) {
            throw new IOException(what + ": expected " + expected + ", found " + actual);
        }
    }
}
