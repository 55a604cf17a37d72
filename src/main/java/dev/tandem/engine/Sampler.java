package dev.tandem.engine;

/**
 * Picks the next token from logits. Deterministic: the token at {@code position} depends only on
 * (logits, params, position), so a sequence resumed on another worker, or recomputed, samples the
 * same tokens. The coin is the {@code position}-th output of SplitMix64 seeded with the params' seed.
 *
 * <p>Order of operations: probabilities p = softmax(logits / temperature) in double (max-subtracted,
 * with StrictMath's exp so every JVM agrees); the top-k cut; the nucleus (top-p) cut, keeping the
 * smallest prefix of the sorted survivors whose probability reaches topP of theirs; one draw from
 * the survivors, renormalised. "Sorted" means by logit descending (NaN last), equal logits by lower
 * token id: that is probability descending, with equal probabilities ordered by logit, then id.
 */
public final class Sampler {
    /** Relative slack for float rounding when bounding the nucleus (sums are exact to ~1e-12 here). */
    private static final double NUCLEUS_SLACK = 1e-9;

    private Sampler() {}

    /** The sampled token id; never mutates {@code logits}. */
    public static int sample(float[] logits, SamplingParams p, int position) {
        if (logits.length == 0) {
            throw new IllegalArgumentException("cannot sample from empty logits");
        }
        if (p.temperature() == 0.0) {
            return argmax(logits);
        }
        int n = logits.length;
        double temperature = p.temperature();
        double[] prob = new double[n]; // first the scaled logits, then (where needed) the probabilities
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            double z = logits[i] / temperature;
            prob[i] = Double.isNaN(z) ? Double.NEGATIVE_INFINITY : z;
            max = Math.max(max, prob[i]);
        }
        if (Double.isInfinite(max)) {
            return argmax(logits); // degenerate input (all -inf/NaN, or a +inf logit): nothing to weigh
        }

        int[] kept; // sorted survivors; null = every token, in id order
        int count;
        double total;
        if (p.topK() > 0 && p.topK() < n) {
            kept = topK(logits, p.topK());
            count = kept.length;
            total = 0.0;
            for (int id : kept) { // only the survivors' probabilities are ever needed
                prob[id] = StrictExp.exp(prob[id] - max);
                total += prob[id];
            }
        } else {
            kept = null;
            count = n;
            total = 0.0;
            for (int i = 0; i < n; i++) {
                prob[i] = StrictExp.exp(prob[i] - max);
                total += prob[i];
            }
            if (p.topP() < 1.0) {
                kept = nucleusCandidates(logits, prob, total, p.topP());
                count = kept.length;
            }
        }
        if (p.topP() < 1.0) {
            count = nucleusSize(prob, kept, count, total * p.topP());
        }
        double coin = SplitMix64.unitDouble(SplitMix64.at(p.seed(), position));
        return draw(prob, kept, count, coin);
    }

    /** Index of the largest logit, lowest index on ties; NaN never wins (all NaN gives 0). */
    public static int argmax(float[] logits) {
        int best = -1;
        for (int i = 0; i < logits.length; i++) {
            float v = logits[i];
            if (Float.isNaN(v)) {
                continue;
            }
            if (best < 0 || v > logits[best]) {
                best = i;
            }
        }
        return Math.max(best, 0);
    }

    private static int draw(double[] prob, int[] kept, int count, double coin) {
        double total = 0.0;
        for (int r = 0; r < count; r++) {
            total += prob[kept == null ? r : kept[r]];
        }
        double target = coin * total;
        double cdf = 0.0;
        int last = kept == null ? 0 : kept[0];
        for (int r = 0; r < count; r++) {
            int id = kept == null ? r : kept[r];
            if (prob[id] <= 0.0) {
                continue;
            }
            cdf += prob[id];
            last = id;
            if (target < cdf) {
                return id;
            }
        }
        return last; // only reachable through rounding when the coin lands on the very top
    }

    /** Smallest sorted prefix of kept[0, count) whose probability sum reaches {@code mass}. */
    private static int nucleusSize(double[] prob, int[] kept, int count, double mass) {
        double cumulative = 0.0;
        for (int r = 0; r < count; r++) {
            cumulative += prob[kept[r]];
            if (cumulative >= mass) {
                return r + 1;
            }
        }
        return count;
    }

    /**
     * The sorted tokens that can belong to the nucleus, without sorting the whole vocabulary: lower a
     * probability threshold until the tokens above it hold (comfortably) more than topP of the mass.
     * Those tokens are a prefix of the sorted order (probability falls as the logit does), and that
     * prefix already reaches topP, so the nucleus lies inside it.
     */
    private static int[] nucleusCandidates(float[] logits, double[] prob, double total, double topP) {
        double needed = total * (topP + NUCLEUS_SLACK);
        double threshold = 0.0;
        if (needed < total) {
            for (double t = 0.25; t > 1e-300; t *= 0.0625) {
                double mass = 0.0;
                for (double v : prob) {
                    if (v >= t) {
                        mass += v;
                    }
                }
                if (mass >= needed) {
                    threshold = t;
                    break;
                }
            }
        }
        int m = 0;
        for (double v : prob) {
            if (v >= threshold) {
                m++;
            }
        }
        int[] candidates = new int[m];
        m = 0;
        for (int i = 0; i < prob.length; i++) {
            if (prob[i] >= threshold) {
                candidates[m++] = i;
            }
        }
        sortDescending(candidates, logits);
        return candidates;
    }

    /** The k best tokens, sorted; a min-heap of the best k keeps this O(n log k). */
    static int[] topK(float[] logits, int k) {
        int[] heap = new int[k]; // heap[0] is the worst of the best k
        int size = 0;
        for (int i = 0; i < logits.length; i++) {
            if (size < k) {
                heap[size] = i;
                siftUp(heap, size++, logits);
            } else if (better(i, heap[0], logits)) {
                heap[0] = i;
                siftDown(heap, size, logits);
            }
        }
        sortDescending(heap, logits);
        return heap;
    }

    private static float key(float[] logits, int i) {
        float v = logits[i];
        return Float.isNaN(v) ? Float.NEGATIVE_INFINITY : v;
    }

    /** True when token a sorts before token b: higher logit, or equal and lower id. */
    private static boolean better(int a, int b, float[] logits) {
        float ka = key(logits, a);
        float kb = key(logits, b);
        return ka > kb || (ka == kb && a < b);
    }

    private static void siftUp(int[] heap, int i, float[] logits) {
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!better(heap[parent], heap[i], logits)) {
                return;
            }
            swap(heap, parent, i);
            i = parent;
        }
    }

    private static void siftDown(int[] heap, int size, float[] logits) {
        int i = 0;
        while (true) {
            int worst = i;
            int l = 2 * i + 1;
            int r = l + 1;
            if (l < size && better(heap[worst], heap[l], logits)) {
                worst = l;
            }
            if (r < size && better(heap[worst], heap[r], logits)) {
                worst = r;
            }
            if (worst == i) {
                return;
            }
            swap(heap, i, worst);
            i = worst;
        }
    }

    private static void swap(int[] a, int i, int j) {
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }

    /** Merge sort of token ids by {@link #better}; a total order, so the result is unique. */
    static void sortDescending(int[] ids, float[] logits) {
        if (ids.length < 2) {
            return;
        }
        int[] buf = new int[ids.length];
        for (int width = 1; width < ids.length; width *= 2) {
            for (int lo = 0; lo < ids.length; lo += 2 * width) {
                int mid = Math.min(lo + width, ids.length);
                int hi = Math.min(lo + 2 * width, ids.length);
                int a = lo;
                int b = mid;
                for (int o = lo; o < hi; o++) {
                    buf[o] = (b >= hi || (a < mid && !better(ids[b], ids[a], logits))) ? ids[a++] : ids[b++];
                }
            }
            System.arraycopy(buf, 0, ids, 0, ids.length);
        }
    }
}
