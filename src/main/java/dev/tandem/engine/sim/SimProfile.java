package dev.tandem.engine.sim;

/**
 * What one simulated worker costs: a model on an accelerator, reduced to the few figures that set
 * prefill time, decode step time, KV size and transfer time. The defaults in {@link SimProfiles} come
 * from public data sheets and model cards (benchmarks.md, "Sources and assumptions").
 *
 * <ul>
 *   <li>Prefill of positions c..n: {@code (2·params·(n−c) + 2·layers·attentionDim·(n²−c²)) / (peakFlops·prefillMfu)}
 *       — the matmuls per new token plus attention over the context, so a cached prefix saves both.
 *   <li>Decode step of a batch holding T context tokens: {@code stepOverhead + (weightBytes + T·kvBytesPerToken)
 *       / (hbmBytesPerSecond·hbmEfficiency)} — a step reads the weights once and every sequence's KV.
 *   <li>KV transfer of b bytes: {@code b / interconnectBytesPerSecond}.
 * </ul>
 *
 * @param model              the model's name as the API shows it
 * @param accelerator        what it runs on, for the reader
 * @param contextLength      the model's context window in tokens
 * @param params             parameters (weights) of the model
 * @param layers             transformer layers
 * @param attentionDim       query heads × head dimension
 * @param kvBytesPerToken    K and V of one token over all layers, in the served precision
 * @param weightBytes        the weights in the served precision
 * @param peakFlops          dense peak of the accelerator(s) in that precision, FLOP/s
 * @param prefillMfu         the share of peak prefill reaches
 * @param hbmBytesPerSecond  memory bandwidth of the accelerator(s)
 * @param hbmEfficiency      the share of that bandwidth a decode step reaches
 * @param stepOverheadMicros fixed cost of one decode step (kernel launches, sampling, scheduling)
 * @param kvMemoryBytes      accelerator memory left for KV after the weights and activations
 * @param interconnectBytesPerSecond KV transfer bandwidth between a prefill and a decode worker
 */
public record SimProfile(
        String name,
        String model,
        String accelerator,
        int contextLength,
        double params,
        int layers,
        int attentionDim,
        long kvBytesPerToken,
        long weightBytes,
        double peakFlops,
        double prefillMfu,
        double hbmBytesPerSecond,
        double hbmEfficiency,
        long stepOverheadMicros,
        long kvMemoryBytes,
        double interconnectBytesPerSecond) {

    public SimProfile {
        if (contextLength < 2 || kvBytesPerToken <= 0) {
            throw new IllegalArgumentException(
                    "a profile needs a context of 2+ tokens and a positive KV size: " + name);
        }
    }

    /** Nanoseconds to prefill positions {@code [cached, total)} given the first {@code cached} are reused. */
    public long prefillNanos(int cached, int total) {
        if (peakFlops <= 0 || total <= cached) {
            return 0;
        }
        double n = total;
        double c = cached;
        double flops = 2 * params * (n - c) + 2.0 * layers * attentionDim * (n * n - c * c);
        return (long) (flops / (peakFlops * prefillMfu) * 1e9);
    }

    /** Nanoseconds for one decode step of {@code batch} sequences holding {@code contextTokens} in all. */
    public long decodeStepNanos(int batch, long contextTokens) {
        if (batch == 0 || hbmBytesPerSecond <= 0) {
            return 0;
        }
        double bytes = weightBytes + (double) contextTokens * kvBytesPerToken;
        return stepOverheadMicros * 1000 + (long) (bytes / (hbmBytesPerSecond * hbmEfficiency) * 1e9);
    }

    /** Nanoseconds to move {@code bytes} of KV to another worker. */
    public long transferNanos(long bytes) {
        return interconnectBytesPerSecond <= 0 ? 0 : (long) (bytes / interconnectBytesPerSecond * 1e9);
    }
}
