package dev.tandem.router.scaling;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Per model, the tokens a router's admitted requests brought and made over a sliding window: prompt tokens as
 * requests arrive, the share of prefilled prompt tokens a prefill worker had to compute, output tokens as they
 * are delivered. The window is {@link #SLOTS} slots of counts (not one entry per event: output is counted per
 * token batch). Times are passed in, so that tests and the router's loop say what time it is. Not thread-safe:
 * the router's loop only.
 */
public final class TokenWindow {
    /** Slots per window: a slot ages out at a time, so the rate moves in steps of 1/SLOTS of the window. */
    static final int SLOTS = 30;

    private static final int ARRIVED = 0;
    private static final int POOL_COMPUTED = 1;
    private static final int PREFILLED = 2;
    private static final int OUTPUT = 3;

    /** The window's rates for one model (per second). */
    public record Rates(double uncachedPromptTokensPerSec, double outputTokensPerSec) {
        public static final Rates NONE = new Rates(0, 0);
    }

    private final long windowNanos;
    private final long slotNanos;
    private final Map<String, Counts> models = new HashMap<>();

    public TokenWindow(long windowNanos) {
        this.windowNanos = Math.max(SLOTS, windowNanos);
        this.slotNanos = this.windowNanos / SLOTS;
    }

    /** A request of {@code model} was admitted with a prompt of {@code promptTokens}. */
    public void arrived(String model, long promptTokens, long nanos) {
        add(model, ARRIVED, promptTokens, nanos);
    }

    /**
     * A prompt of {@code model} was prefilled: {@code prompt} tokens, of which {@code poolComputed} a prefill
     * worker computed (0 when the decode worker prefilled it itself or a cache held it all).
     */
    public void prefilled(String model, long prompt, long poolComputed, long nanos) {
        add(model, PREFILLED, prompt, nanos);
        add(model, POOL_COMPUTED, poolComputed, nanos);
    }

    /** {@code tokens} output tokens of {@code model} were delivered. */
    public void served(String model, long tokens, long nanos) {
        add(model, OUTPUT, tokens, nanos);
    }

    /**
     * Every model's rates over the window ending at {@code nanos}. The uncached rate is the arrivals' prompt
     * tokens times the share of prefilled tokens a prefill worker computed: counted as requests arrive, it
     * follows demand even while requests wait in the router's queue (a count at prefill could not exceed what
     * the pool computes). No prefill seen yet in the window: all of it counts. Models silent for a whole window
     * are forgotten.
     */
    public Map<String, Rates> rates(long nanos) {
        Map<String, Rates> out = new HashMap<>();
        Iterator<Map.Entry<String, Counts>> it = models.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<String, Counts> e = it.next();
            long[] sum = e.getValue().sum(nanos / slotNanos);
            if (sum[ARRIVED] == 0 && sum[PREFILLED] == 0 && sum[OUTPUT] == 0) {
                it.remove();
                continue;
            }
            // A window not yet full (the router just started) is as long as it has been counting.
            long span = Math.max(slotNanos, Math.min(windowNanos, nanos - e.getValue().firstNanos));
            double seconds = span / 1e9;
            double share = sum[PREFILLED] == 0 ? 1 : Math.min(1, (double) sum[POOL_COMPUTED] / sum[PREFILLED]);
            out.put(e.getKey(), new Rates(sum[ARRIVED] * share / seconds, sum[OUTPUT] / seconds));
        }
        return out;
    }

    private void add(String model, int kind, long tokens, long nanos) {
        if (tokens <= 0) {
            return;
        }
        models.computeIfAbsent(model, m -> new Counts(nanos)).add(kind, tokens, nanos / slotNanos);
    }

    /** One model's slots: counts by kind, and which slot number each one holds. */
    private static final class Counts {
        final long firstNanos;
        final long[][] counts = new long[SLOTS][4];
        final long[] slotOf = new long[SLOTS];

        Counts(long firstNanos) {
            this.firstNanos = firstNanos;
            java.util.Arrays.fill(slotOf, Long.MIN_VALUE);
        }

        void add(int kind, long tokens, long slot) {
            int i = (int) Math.floorMod(slot, (long) SLOTS);
            if (slotOf[i] != slot) {
                slotOf[i] = slot;
                java.util.Arrays.fill(counts[i], 0);
            }
            counts[i][kind] += tokens;
        }

        long[] sum(long nowSlot) {
            long[] sum = new long[4];
            for (int i = 0; i < SLOTS; i++) {
                if (slotOf[i] > nowSlot - SLOTS && slotOf[i] <= nowSlot) {
                    for (int k = 0; k < 4; k++) {
                        sum[k] += counts[i][k];
                    }
                }
            }
            return sum;
        }
    }
}
