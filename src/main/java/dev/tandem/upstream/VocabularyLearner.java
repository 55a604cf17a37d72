package dev.tandem.upstream;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.logging.Logger;

/**
 * Learns every token's text from an upstream without a tokenizer file, in bulk: one {@code /detokenize}
 * of {@code [D, t0, D, t1, ..., D]} answers for a whole batch, where {@code D} is a delimiter — the
 * tokens of a short text no token is likely to hold, two rare control characters first (found through
 * {@code /tokenize}) — and the answer splits on it. vLLM
 * and SGLang expose no call that lists a vocabulary: {@code /tokenize}'s {@code return_token_strs}
 * only names the tokens of a text, and {@code /get_tokenizer_info} holds the tokenizer's settings,
 * not its vocabulary. Decoding between delimiters also keeps a SentencePiece token's leading space,
 * which a decoder strips from the start of a text.
 *
 * <p>A batch that does not split into as many texts as it has tokens (a token's text holds the
 * delimiter) or that the upstream refuses (longer than its context) is halved until it does, down to
 * single tokens. Without a usable delimiter every token is asked alone, {@code PARALLEL} at a time.
 *
 * <p>What no detokenizing can learn: a byte-level token that holds part of a UTF-8 character decodes,
 * alone or not, to U+FFFD; those are counted and logged, and a {@code tokenizer.json} makes them exact.
 */
final class VocabularyLearner {
    private static final Logger LOG = Logger.getLogger(VocabularyLearner.class.getName());
    /**
     * Delimiters tried in turn. Two adjacent control characters first: a byte-level vocabulary holds
     * tokens with any one byte (each byte in about one token in 16 of a random vocabulary, so every large
     * batch would hold one and be halved down to it), but hardly any with that pair.
     */
    private static final String[] DELIMITERS = {"\u001f\u001e", "\u001f", "~", "|", "\n"};

    static final int MAX_BATCH = 4096;
    /** Batches (or single tokens, without a delimiter) in flight at once. */
    private static final int PARALLEL = 16;

    private final UpstreamClient client;
    private final String model;
    private final Function<Integer, Future<String>> detokenizeOne;

    VocabularyLearner(UpstreamClient client, String model, Function<Integer, Future<String>> detokenizeOne) {
        this.client = client;
        this.model = model;
        this.detokenizeOne = detokenizeOne;
    }

    /** A delimiter token and its one-character text, or null when none round-trips. */
    Future<Delimiter> delimiter() {
        Future<Delimiter> found = Future.succeededFuture(null);
        for (String text : DELIMITERS) {
            found = found.compose(d -> d != null ? Future.succeededFuture(d) : tryDelimiter(text));
        }
        return found;
    }

    /** The delimiter's tokens and its text. */
    record Delimiter(List<Integer> tokens, String text) {}

    private Future<Delimiter> tryDelimiter(String text) {
        JsonObject body =
                new JsonObject().put("model", model).put("prompt", text).put("add_special_tokens", false);
        return DiscoveryRetry.call(client, () -> client.postJson("/tokenize", body))
                .compose(a -> {
                    List<Integer> ids = new ArrayList<>();
                    a.getJsonArray("tokens", new JsonArray()).forEach(id -> ids.add(((Number) id).intValue()));
                    // As tokenized, or without a SentencePiece model's leading "▁".
                    return roundTrips(ids, text)
                            .compose(d -> d != null || ids.size() < 2
                                    ? Future.succeededFuture(d)
                                    : roundTrips(ids.subList(1, ids.size()), text));
                })
                .otherwise((Delimiter) null);
    }

    /** The delimiter, when its tokens twice detokenize to its text twice. */
    private Future<Delimiter> roundTrips(List<Integer> tokens, String text) {
        if (tokens.isEmpty()) {
            return Future.succeededFuture(null);
        }
        List<Integer> twice = new ArrayList<>(tokens);
        twice.addAll(tokens);
        return detokenize(twice)
                .map(decoded -> decoded.equals(text + text) ? new Delimiter(List.copyOf(tokens), text) : null);
    }

    /** The texts of tokens {@code [from, to)}, batches of at most {@code batch} tokens. */
    Future<List<String>> texts(Delimiter d, int from, int to, int batch) {
        if (d == null) {
            List<Future<String>> singles = new ArrayList<>();
            for (int t = from; t < to; t++) {
                singles.add(detokenizeOne.apply(t));
            }
            return Future.all(singles).map(all -> all.<String>list());
        }
        List<Future<List<String>>> parts = new ArrayList<>();
        for (int start = from; start < to; start += batch) {
            parts.add(batch(d, start, Math.min(to, start + batch)));
        }
        return Future.all(parts).map(all -> {
            List<String> out = new ArrayList<>(to - from);
            for (int i = 0; i < parts.size(); i++) {
                out.addAll(all.<List<String>>resultAt(i));
            }
            return out;
        });
    }

    /** One batch; halved when it does not split cleanly or is refused. */
    private Future<List<String>> batch(Delimiter d, int from, int to) {
        if (to - from == 1) {
            return detokenizeOne.apply(from).map(List::of);
        }
        List<Integer> ids = new ArrayList<>(
                (d.tokens().size() + 1) * (to - from) + d.tokens().size());
        ids.addAll(d.tokens());
        for (int t = from; t < to; t++) {
            ids.add(t);
            ids.addAll(d.tokens());
        }
        return detokenize(ids)
                .map(text -> split(text, d.text(), to - from))
                .recover(e -> e instanceof UpstreamException u && u.clientError()
                        ? Future.succeededFuture(null)
                        : Future.failedFuture(e))
                .compose(texts -> {
                    if (texts != null) {
                        return Future.succeededFuture(texts);
                    }
                    int mid = (from + to) >>> 1;
                    return batch(d, from, mid)
                            .compose(a -> batch(d, mid, to).map(b -> {
                                List<String> out = new ArrayList<>(a);
                                out.addAll(b);
                                return out;
                            }));
                });
    }

    /** The n texts between n + 1 delimiters, or null when the text is not so made. */
    static List<String> split(String text, String delimiter, int n) {
        if (!text.startsWith(delimiter) || !text.endsWith(delimiter) || text.length() < delimiter.length() * (n + 1)) {
            return null;
        }
        List<String> out = new ArrayList<>(n);
        int at = delimiter.length();
        while (at < text.length()) {
            int next = text.indexOf(delimiter, at);
            out.add(text.substring(at, next));
            at = next + delimiter.length();
        }
        return out.size() == n ? out : null;
    }

    private Future<String> detokenize(List<Integer> ids) {
        JsonObject body = new JsonObject().put("model", model).put("tokens", new JsonArray(ids));
        return DiscoveryRetry.call(client, () -> client.postJson("/detokenize", body))
                .map(a -> {
                    String text = a.getString("prompt", a.getString("text"));
                    if (text == null) {
                        throw new UpstreamException(0, "a /detokenize answer with no text: " + a.encode());
                    }
                    return text;
                });
    }

    /** Tokens per batch: with their delimiters, a batch stays within the upstream's context. */
    static int batch(Delimiter d, int context) {
        int per = d == null ? 2 : d.tokens().size() + 1;
        return Math.max(1, Math.min(MAX_BATCH, (context - per + 1) / per));
    }

    /** How many tokens are in flight at once: bounds what one window of {@link #texts} asks. */
    static int window(Delimiter d, int batch) {
        return d == null ? PARALLEL : PARALLEL * batch;
    }

    static void logPartial(String baseUrl, List<String> texts) {
        long partial = texts.stream().filter(s -> s.indexOf('\uFFFD') >= 0).count();
        if (partial > 0) {
            LOG.warning("the upstream " + baseUrl + " detokenizes " + partial + " tokens to U+FFFD (byte-level"
                    + " tokens holding part of a UTF-8 character): give model.tokenizer the model's tokenizer.json"
                    + " for their exact bytes");
        }
    }
}
