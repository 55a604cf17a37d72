package dev.tandem.upstream;

import dev.tandem.config.ConfigException;
import dev.tandem.config.ModelSettings;
import dev.tandem.config.UpstreamSettings;
import dev.tandem.engine.tokenizer.BpeTokenizer;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.ChatTemplateLoader;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.engine.tokenizer.TokenizerFiles;
import dev.tandem.engine.tokenizer.UpstreamChatTemplate;
import dev.tandem.engine.tokenizer.UpstreamTokenizer;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Logger;

/**
 * Learns the upstream's model at a worker's start: blocking, on the thread that starts the node (never
 * an event loop). Waits up to {@code upstream-start-timeout-ms} for {@code /v1/models}, then fails with
 * a message naming the upstream, so a worker whose upstream is down does not register.
 */
public final class UpstreamDiscovery {
    private static final Logger LOG = Logger.getLogger(UpstreamDiscovery.class.getName());
    private static final int MAX_VOCAB = 1 << 22;
    /**
     * A discovery call's deadline: its answers are small and quick, unlike a long prompt's prefill that
     * {@code upstream-timeout-ms} is sized for, so a call lost while the upstream starts is retried soon.
     */
    static final long CALL_TIMEOUT_MS = 10_000;

    private UpstreamDiscovery() {}

    /** The settings of the client discovery calls through: the upstream's, with {@link #CALL_TIMEOUT_MS} at most. */
    public static UpstreamSettings callSettings(UpstreamSettings upstream) {
        return upstream.withTimeoutMs(Math.min(upstream.timeoutMs(), CALL_TIMEOUT_MS));
    }

    public static UpstreamModel learn(UpstreamClient client, ModelSettings settings) {
        UpstreamSettings u = settings.upstream();
        JsonObject model = firstModel(client, u);
        String name = model.getString("id");
        Integer context = model.getInteger("max_model_len");
        if (name == null || context == null || context <= 0) {
            throw new IllegalStateException("the upstream " + client.baseUrl()
                    + " lists no model with an id and a max_model_len in /v1/models: " + model.encode());
        }
        long start = System.nanoTime();
        Tokenizer tokenizer = settings.tokenizer().isBlank()
                ? learnTokenizer(client, name, u.vocabSize(), context)
                : tokenizerFile(client, name, settings.tokenizer());
        LOG.info("upstream " + client.baseUrl() + " (" + u.protocol() + ") serves '" + name + "', context " + context
                + ", vocabulary " + tokenizer.vocabSize() + " ready in " + (System.nanoTime() - start) / 1_000_000
                + " ms");
        // Without the model's directory, vLLM applies its own template (/tokenize with messages);
        // SGLang's /tokenize takes text only, so its chats keep role-tags.
        ChatTemplate fallback = tokenizer instanceof UpstreamTokenizer t && UpstreamSettings.VLLM.equals(u.protocol())
                ? new UpstreamChatTemplate(t)
                : ChatTemplate.ROLE_TAGS;
        return UpstreamModel.of(
                name, context, tokenizer, ChatTemplateLoader.besideTokenizer(settings.tokenizer(), fallback));
    }

    private static JsonObject firstModel(UpstreamClient client, UpstreamSettings u) {
        long deadline = System.nanoTime() + u.startTimeoutMs() * 1_000_000;
        while (true) {
            try {
                JsonArray data = get(client.getJson("/v1/models")).getJsonArray("data");
                if (data == null || data.isEmpty()) {
                    throw new UpstreamException(0, "no model in /v1/models");
                }
                return data.getJsonObject(0);
            } catch (RuntimeException e) {
                if (System.nanoTime() >= deadline) {
                    throw new IllegalStateException(
                            "the upstream " + client.baseUrl() + " did not answer /v1/models within "
                                    + u.startTimeoutMs() + " ms (model.upstream-start-timeout-ms): " + e.getMessage(),
                            e);
                }
                LOG.info("waiting for the upstream " + client.baseUrl() + ": " + e.getMessage());
                sleep(Math.min(1_000, Math.max(50, u.startTimeoutMs() / 10)));
            }
        }
    }

    /**
     * A llama2.c {@code tokenizer.bin} encodes in process, as before; a {@code tokenizer.json} (or a model
     * directory holding one) gives every token's exact bytes while the upstream's {@code /tokenize} stays
     * the authority on encoding, so prompts are the ids the upstream would make.
     */
    private static Tokenizer tokenizerFile(UpstreamClient client, String model, String file) {
        Tokenizer loaded;
        try {
            loaded = TokenizerFiles.load(Path.of(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read tokenizer " + file + ": " + e.getMessage(), e);
        }
        if (!(loaded instanceof BpeTokenizer bpe)) {
            return loaded;
        }
        return new UpstreamTokenizer(client.baseUrl(), model, bpe.pieces(), bos(client, model));
    }

    /** Every token's text from /detokenize in bulk ({@link VocabularyLearner}), and BOS from /tokenize. */
    static UpstreamTokenizer learnTokenizer(UpstreamClient client, String model, int configuredVocab, int context) {
        int vocab = configuredVocab > 0 ? configuredVocab : probeVocab(client, model);
        VocabularyLearner learner = new VocabularyLearner(client, model, t -> detokenize(client, model, t));
        VocabularyLearner.Delimiter delimiter = get(learner.delimiter());
        int batch = VocabularyLearner.batch(delimiter, context);
        int window = VocabularyLearner.window(delimiter, batch);
        List<String> texts = new ArrayList<>(vocab);
        for (int start = 0; start < vocab; start += window) {
            texts.addAll(get(learner.texts(delimiter, start, Math.min(vocab, start + window), batch)));
        }
        VocabularyLearner.logPartial(client.baseUrl(), texts);
        byte[][] pieces = new byte[vocab][];
        for (int t = 0; t < vocab; t++) {
            pieces[t] = texts.get(t).getBytes(StandardCharsets.UTF_8);
        }
        return new UpstreamTokenizer(client.baseUrl(), model, pieces, bos(client, model));
    }

    /** The token /tokenize puts before an empty text, or -1. */
    private static int bos(UpstreamClient client, String model) {
        JsonObject empty =
                new JsonObject().put("model", model).put("prompt", "").put("add_special_tokens", true);
        JsonArray bos = get(DiscoveryRetry.call(client, () -> client.postJson("/tokenize", empty)))
                .getJsonArray("tokens", new JsonArray());
        return bos.isEmpty() ? -1 : bos.getInteger(0);
    }

    /** The vocabulary's size: the first id /detokenize refuses (doubling, then bisecting). */
    private static int probeVocab(UpstreamClient client, String model) {
        if (!known(client, model, 0)) {
            throw new ConfigException("the upstream " + client.baseUrl()
                    + " does not detokenize token 0: set model.upstream-vocab-size or model.tokenizer");
        }
        int low = 1; // known good: ids below low
        int high = 2;
        while (high <= MAX_VOCAB && known(client, model, high - 1)) {
            low = high;
            high *= 2;
        }
        if (high > MAX_VOCAB) {
            throw new ConfigException("the upstream " + client.baseUrl()
                    + " detokenizes any id: set model.upstream-vocab-size to its vocabulary's size");
        }
        while (high - low > 1) {
            int mid = (low + high) >>> 1;
            if (known(client, model, mid - 1)) {
                low = mid;
            } else {
                high = mid;
            }
        }
        return low;
    }

    private static boolean known(UpstreamClient client, String model, int token) {
        try {
            get(detokenize(client, model, token));
            return true;
        } catch (UpstreamException e) {
            if (e.clientError()) {
                return false;
            }
            throw e;
        }
    }

    /**
     * vLLM answers {@code {"prompt": text}}, SGLang {@code {"text": text}}; a call that fails for the
     * upstream's sake (not a 4xx) is asked again ({@link DiscoveryRetry}).
     */
    private static Future<String> detokenize(UpstreamClient client, String model, int token) {
        return DiscoveryRetry.call(client, () -> detokenizeOnce(client, model, token));
    }

    private static Future<String> detokenizeOnce(UpstreamClient client, String model, int token) {
        return client.postJson(
                        "/detokenize", new JsonObject().put("model", model).put("tokens", new JsonArray().add(token)))
                .map(a -> {
                    String text = a.getString("prompt", a.getString("text"));
                    if (text == null) {
                        throw new UpstreamException(0, "a /detokenize answer with no text: " + a.encode());
                    }
                    return text;
                });
    }

    /**
     * Waits for a call on this (non-Vert.x) thread. Plain blocking rather than {@code Future.await()}: it
     * does not depend on which Vert.x context the starting thread may carry. The calls have deadlines.
     */
    private static <T> T get(Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(5, TimeUnit.MINUTES);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r
                    ? r
                    : new UpstreamException("the upstream failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new UpstreamException("the upstream did not answer", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking the upstream", e);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the upstream", e);
        }
    }
}
