package dev.tandem.engine.sim;

import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.ModelInfo;
import dev.tandem.engine.Pacing;
import dev.tandem.engine.SplitMix64;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.engine.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * An engine that costs time instead of compute: prefill and decode take what the {@link SimProfile}
 * says its model would take on its accelerator (divided by a time scale, so an hour of trace replays
 * in minutes), the KV it holds is one stand-in value per position (the token id as K, the position as
 * V) while it counts the model's real KV bytes, and its tokens are deterministic: the token after
 * position p is a lowercase letter or a space chosen by hashing (previous token, p), never EOS, so a
 * generation runs to max_tokens. Cheap enough that dozens of workers fit in one JVM; the prefix caches,
 * KV transfer and cache events around it are the real ones.
 */
public final class SimEngine implements Engine {
    private static final byte[] ALPHABET = "abcdefghijklmnopqrstuvwxyz ".getBytes(StandardCharsets.US_ASCII);
    private static final float CHOSEN_LOGIT = 100f;

    /** A typical prompt: the rate falls with length (attention), so the prior is the rate at one size. */
    static final int PRIOR_PROMPT_TOKENS = 4096;

    private final SimProfile profile;
    private final double timeScale;
    private final ModelInfo info;
    private final KvLayout layout;

    /**
     * @param timeScale simulated seconds per wall-clock second (1 = real time, 10 = ten times faster)
     */
    public SimEngine(SimProfile profile, double timeScale, int blockSize) {
        if (!(timeScale > 0) || Double.isInfinite(timeScale)) {
            throw new IllegalArgumentException("time scale must be a positive number, got " + timeScale);
        }
        this.profile = profile;
        this.timeScale = timeScale;
        ModelConfig config = new ModelConfig(8, 8, 1, 1, 1, ByteTokenizer.VOCAB_SIZE, profile.contextLength(), true);
        // Same profile, same fingerprint: KV moves between sim workers of one profile only.
        long fingerprint = SplitMix64.mix(profile.name().hashCode() * 0x9E3779B97F4A7C15L + profile.contextLength());
        this.info = new ModelInfo(profile.model(), config, fingerprint);
        this.layout = new KvLayout(1, 1, 1, blockSize, profile.kvBytesPerToken() * blockSize);
    }

    public SimProfile profile() {
        return profile;
    }

    @Override
    public ModelInfo info() {
        return info;
    }

    @Override
    public Tokenizer tokenizer() {
        return ByteTokenizer.INSTANCE;
    }

    @Override
    public KvLayout kvLayout() {
        return layout;
    }

    @Override
    public float[] prefill(KvCache cache, int[] tokens, BooleanSupplier cancelled) {
        checkCache(cache);
        int start = cache.length();
        int end = start + tokens.length;
        if (tokens.length == 0 || end >= info.config().seqLen()) {
            throw new IllegalArgumentException("prefill of " + tokens.length + " tokens at position " + start
                    + " does not fit the context of " + info.config().seqLen());
        }
        cache.ensureCapacity(end);
        for (int i = 0; i < tokens.length; i++) {
            checkToken(tokens[i]);
            write(cache, start + i, tokens[i]);
        }
        pause(profile.prefillNanos(start, end), cancelled);
        cache.setLength(end);
        return logits(tokens[tokens.length - 1], end);
    }

    @Override
    public float[][] decodeStep(List<KvCache> caches, int[] tokens) {
        if (caches.size() != tokens.length) {
            throw new IllegalArgumentException(caches.size() + " caches for " + tokens.length + " tokens");
        }
        IdentityHashMap<KvCache, Boolean> seen = new IdentityHashMap<>();
        long context = 0;
        for (KvCache c : caches) {
            checkCache(c);
            if (seen.put(c, Boolean.TRUE) != null) {
                throw new IllegalArgumentException("one cache twice in a batch");
            }
            context += c.length() + 1;
        }
        float[][] out = new float[caches.size()][];
        for (int i = 0; i < tokens.length; i++) {
            KvCache c = caches.get(i);
            int pos = c.length();
            if (pos + 1 >= info.config().seqLen()) {
                throw new IllegalArgumentException("position " + pos + " is past the context");
            }
            checkToken(tokens[i]);
            c.ensureCapacity(pos + 1);
            write(c, pos, tokens[i]);
            c.setLength(pos + 1);
            out[i] = logits(tokens[i], pos + 1);
        }
        pause(profile.decodeStepNanos(caches.size(), context), () -> false);
        return out;
    }

    @Override
    public long transferNanos(long bytes) {
        return (long) (profile.transferNanos(bytes) / timeScale);
    }

    /** The profile's rate for a prompt of {@value #PRIOR_PROMPT_TOKENS} tokens, in wall-clock seconds (0 for {@code zero}). */
    @Override
    public double expectedPrefillTokensPerSecond() {
        long nanos = profile.prefillNanos(0, PRIOR_PROMPT_TOKENS);
        return nanos <= 0 ? 0 : PRIOR_PROMPT_TOKENS / (nanos / timeScale / 1e9);
    }

    /** The token this engine emits after {@code previous} at {@code position}: a pure function of both. */
    public static int nextToken(int previous, int position) {
        long h = SplitMix64.mix(((long) previous << 32) ^ position);
        return ALPHABET[(int) Long.remainderUnsigned(h, ALPHABET.length)];
    }

    private static float[] logits(int previous, int position) {
        float[] logits = new float[ByteTokenizer.VOCAB_SIZE];
        logits[nextToken(previous, position)] = CHOSEN_LOGIT;
        return logits;
    }

    private static void write(KvCache cache, int pos, int token) {
        float[] block = cache.blockFor(pos);
        block[cache.offset(0, 0, pos)] = token;
        block[cache.offset(0, 1, pos)] = pos;
    }

    private void checkCache(KvCache cache) {
        if (!cache.layout().equals(layout)) {
            throw new IllegalArgumentException("cache layout " + cache.layout() + " is not this engine's " + layout);
        }
    }

    private static void checkToken(int token) {
        if (token < 0 || token >= ByteTokenizer.VOCAB_SIZE) {
            throw new IllegalArgumentException("token " + token + " is outside the vocabulary");
        }
    }

    /** Waits the scaled time, honouring a cancel as promptly as real compute would. */
    private void pause(long simulatedNanos, BooleanSupplier cancelled) {
        Pacing.waitUntil(System.nanoTime() + (long) (simulatedNanos / timeScale), cancelled);
    }
}
