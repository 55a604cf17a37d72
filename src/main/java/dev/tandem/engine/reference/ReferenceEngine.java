package dev.tandem.engine.reference;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.engine.KvPrecision;
import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.ModelInfo;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.Llama2cTokenizer;
import dev.tandem.engine.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;

/**
 * A llama-architecture transformer in plain Java computing what llama2.c's run.c computes, float for
 * float. Single-threaded per call; safe for concurrent calls on different caches.
 *
 * <p>Prefill runs its positions in chunks of {@value #PREFILL_CHUNK} and decode runs its sequences as
 * one batch, so each weight column is read once per chunk or step; the logits of a sequence are
 * bit-identical whatever the chunking or batch (see {@link BatchForward}). The engine keeps its own
 * copy of the weights, laid out by columns; the {@link ModelWeights} it was made from can be dropped.
 */
public final class ReferenceEngine implements Engine {
    public static final String BUILTIN_NAME = "tandem-builtin";
    /** Shape of the built-in model: GQA (8 query heads over 4 KV heads) and an untied classifier. */
    public static final ModelConfig BUILTIN_CONFIG =
            new ModelConfig(64, 176, 2, 8, 4, ByteTokenizer.VOCAB_SIZE, 512, false);

    public static final long BUILTIN_SEED = 0x7A4D3E5EEDL;
    /** Prefill positions computed together: enough to reuse each weight row, small enough to cancel promptly. */
    static final int PREFILL_CHUNK = 32;

    private final ModelInfo info;
    private final TransformerWeights weights;
    /** Big products split over the machine's cores (decode is bound by reading weights; see ParallelMatmul). */
    private final ParallelMatmul matmul =
            new ParallelMatmul(Runtime.getRuntime().availableProcessors());

    /** For work already split over the threads. */
    private static final ParallelMatmul SERIAL = new ParallelMatmul(1);

    private final Tokenizer tokenizer;
    private final ChatTemplate chatTemplate;
    private final KvLayout layout;

    private ReferenceEngine(
            ModelInfo info, TransformerWeights weights, Tokenizer tokenizer, ChatTemplate chatTemplate, int blockSize) {
        ModelConfig config = weights.config();
        if (tokenizer.vocabSize() != config.vocabSize()) {
            throw new IllegalArgumentException("tokenizer has " + tokenizer.vocabSize() + " tokens but model "
                    + info.name() + " has vocab " + config.vocabSize());
        }
        this.weights = weights;
        this.tokenizer = tokenizer;
        this.chatTemplate = chatTemplate;
        this.layout = KvLayout.of(
                config,
                blockSize,
                weights.numerics() == Numerics.GGML ? KvPrecision.F16 : KvPrecision.F32); // ggml's cache is f16
        this.info = info;
    }

    private ReferenceEngine(String name, ModelWeights weights, Tokenizer tokenizer, int blockSize) {
        // A llama2.c checkpoint with the Llama 2 vocabulary speaks Llama 2's chat format.
        this(
                new ModelInfo(name, weights.config(), weights.fingerprint()),
                new PackedWeights(weights),
                tokenizer,
                tokenizer instanceof Llama2cTokenizer ? ChatTemplate.LLAMA2 : ChatTemplate.ROLE_TAGS,
                blockSize);
    }

    /**
     * An engine over weights from any source (a GGUF file's, mapped): {@code info} names the model and
     * fingerprints them, {@code chatTemplate} is the model's own.
     */
    public static ReferenceEngine create(
            ModelInfo info, TransformerWeights weights, Tokenizer tokenizer, ChatTemplate chatTemplate, int blockSize) {
        return new ReferenceEngine(info, weights, tokenizer, chatTemplate, blockSize);
    }

    @Override
    public long residentBytes() {
        return weights.bytes();
    }

    /** An engine over weights already in memory; it keeps its own copy, laid out for compute. */
    public static ReferenceEngine create(String name, ModelWeights weights, Tokenizer tokenizer, int blockSize) {
        return new ReferenceEngine(name, weights, tokenizer, blockSize);
    }

    /**
     * Loads a legacy llama2.c float32 checkpoint. Without a tokenizer file the byte tokenizer is used,
     * which only fits a vocabulary of 258. The model is named after the file, minus its extension.
     */
    public static ReferenceEngine load(Path checkpoint, Path tokenizerOrNull, int blockSize) throws IOException {
        ModelWeights weights = Llama2cCheckpoint.read(checkpoint);
        int vocab = weights.config().vocabSize();
        Tokenizer tokenizer;
        if (tokenizerOrNull != null) {
            tokenizer = Llama2cTokenizer.load(tokenizerOrNull, vocab);
        } else if (vocab == ByteTokenizer.VOCAB_SIZE) {
            tokenizer = ByteTokenizer.INSTANCE;
        } else {
            throw new IllegalArgumentException(checkpoint + " has a vocabulary of " + vocab + " tokens: give its "
                    + "tokenizer.bin (the built-in byte tokenizer only fits vocab " + ByteTokenizer.VOCAB_SIZE + ")");
        }
        String file = checkpoint.getFileName().toString();
        int dot = file.lastIndexOf('.');
        return new ReferenceEngine(dot > 0 ? file.substring(0, dot) : file, weights, tokenizer, blockSize);
    }

    /** The built-in model: {@link #BUILTIN_CONFIG} with weights from {@link #BUILTIN_SEED}, byte tokenizer. */
    public static ReferenceEngine builtin(int blockSize) {
        return new ReferenceEngine(BUILTIN_NAME, builtinWeights(), ByteTokenizer.INSTANCE, blockSize);
    }

    /** Fresh weights of the built-in model (e.g. to write them out as a checkpoint). */
    public static ModelWeights builtinWeights() {
        return ModelWeights.random(BUILTIN_CONFIG, BUILTIN_SEED);
    }

    /**
     * Which matrix product this JVM runs: "vector (N-bit)" when started with {@code --add-modules
     * jdk.incubator.vector}, else "scalar". Results are the same bits either way.
     */
    public static String matmulKernel() {
        return MatmulKernel.ACTIVE.describe();
    }

    @Override
    public ModelInfo info() {
        return info;
    }

    @Override
    public ChatTemplate chatTemplate() {
        return chatTemplate;
    }

    @Override
    public Tokenizer tokenizer() {
        return tokenizer;
    }

    @Override
    public KvLayout kvLayout() {
        return layout;
    }

    @Override
    public float[] prefill(KvCache cache, int[] tokens, BooleanSupplier cancelled) {
        checkLayout(cache, 0);
        if (tokens.length == 0) {
            throw new IllegalArgumentException("prefill needs at least one token");
        }
        int start = cache.length();
        checkRoom(start, tokens.length);
        for (int token : tokens) {
            checkToken(token);
        }
        float[][] logits = null;
        for (int from = 0; from < tokens.length; from += PREFILL_CHUNK) {
            if (cancelled != null && cancelled.getAsBoolean()) {
                throw new CancellationException("prefill cancelled at position " + (start + from));
            }
            int n = Math.min(PREFILL_CHUNK, tokens.length - from);
            KvCache[] caches = new KvCache[n];
            int[] positions = new int[n];
            int[] chunk = new int[n];
            for (int i = 0; i < n; i++) {
                caches[i] = cache;
                positions[i] = start + from + i;
                chunk[i] = tokens[from + i];
            }
            cache.ensureCapacity(start + from + n);
            BatchForward forward = new BatchForward(weights, matmul, n);
            forward.layers(caches, positions, chunk, cancelled);
            cache.setLength(start + from + n);
            if (from + n == tokens.length) {
                logits = forward.logits(new int[] {n - 1});
            }
        }
        return logits[0];
    }

    @Override
    public float[][] decodeStep(List<KvCache> caches, int[] tokens) {
        int n = caches.size();
        if (tokens.length != n) {
            throw new IllegalArgumentException(n + " caches but " + tokens.length + " tokens");
        }
        Set<KvCache> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        KvCache[] batch = new KvCache[n];
        int[] positions = new int[n];
        for (int i = 0; i < n; i++) {
            KvCache cache = caches.get(i);
            checkLayout(cache, i);
            if (!seen.add(cache)) {
                throw new IllegalArgumentException("sequence " + i + " repeats a cache already in the batch");
            }
            checkRoom(cache.length(), 1);
            checkToken(tokens[i]);
            batch[i] = cache;
            positions[i] = cache.length();
        }
        if (n == 0) {
            return new float[0][];
        }
        for (int i = 0; i < n; i++) {
            batch[i].ensureCapacity(positions[i] + 1);
        }
        float[][] states = new float[n][];
        if (n >= 2 && matmul.threads() > 1) {
            // Different sequences are independent through every layer: each thread runs the layers of its
            // share of them with no hand-off at all, instead of meeting the other at every product and
            // attention. Only the classifier, too big for a cache, is split by rows.
            matmul.forRanges(n, (b0, b1) -> {
                BatchForward part = new BatchForward(weights, SERIAL, b1 - b0);
                part.layers(
                        java.util.Arrays.copyOfRange(batch, b0, b1),
                        java.util.Arrays.copyOfRange(positions, b0, b1),
                        java.util.Arrays.copyOfRange(tokens, b0, b1),
                        null);
                for (int i = b0; i < b1; i++) {
                    states[i] = part.state(i - b0);
                }
            });
        } else {
            BatchForward forward = new BatchForward(weights, matmul, n);
            forward.layers(batch, positions, tokens, null);
            for (int i = 0; i < n; i++) {
                states[i] = forward.state(i);
            }
        }
        for (int i = 0; i < n; i++) {
            batch[i].setLength(positions[i] + 1);
        }
        return BatchForward.logits(weights, matmul, states);
    }

    private void checkLayout(KvCache cache, int index) {
        if (cache == null) {
            throw new IllegalArgumentException("cache " + index + " is null");
        }
        if (!cache.layout().equals(layout)) {
            throw new IllegalArgumentException(
                    "cache layout " + cache.layout() + " does not match model " + info.name() + " layout " + layout);
        }
    }

    private void checkRoom(int start, int count) {
        int seqLen = info.config().seqLen();
        if ((long) start + count > seqLen) {
            throw new IllegalArgumentException("positions " + start + ".." + (start + count - 1)
                    + " exceed the context of " + seqLen + " tokens of model " + info.name());
        }
    }

    private void checkToken(int token) {
        int vocab = info.config().vocabSize();
        if (token < 0 || token >= vocab) {
            throw new IllegalArgumentException("token id " + token + " outside the vocabulary [0, " + vocab + ")");
        }
    }

    @Override
    public String toString() {
        return "ReferenceEngine[" + info.name() + ", " + info.config() + "]";
    }
}
