package dev.tandem.worker;

/**
 * The mean prompt length the upstream workers of this JVM see (a moving average), to turn an upstream's
 * queue of requests into the prompt tokens the scheduler weighs.
 */
final class PromptStats {
    private static final double WEIGHT = 0.05;
    private static double mean = 512;

    private PromptStats() {}

    static synchronized void record(int promptTokens) {
        mean += WEIGHT * (promptTokens - mean);
    }

    static synchronized int meanPromptTokens() {
        return (int) Math.max(1, Math.round(mean));
    }
}
