package dev.tandem.worker.upstream;

/**
 * The mean prompt length one upstream worker sees (a moving average), to turn its upstream's queue of
 * requests into the prompt tokens the scheduler weighs. Per worker: two workers may front engines that
 * serve different traffic.
 */
final class PromptStats {
    private static final double WEIGHT = 0.05;
    private double mean = 512;

    synchronized void record(int promptTokens) {
        mean += WEIGHT * (promptTokens - mean);
    }

    synchronized int meanPromptTokens() {
        return (int) Math.max(1, Math.round(mean));
    }
}
