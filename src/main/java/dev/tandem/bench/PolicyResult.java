package dev.tandem.bench;

import java.util.List;

/**
 * What one policy's run gave, in the trace's time (wall-clock times the time scale): the figures of
 * {@code summary.json}.
 */
public record PolicyResult(
        String policy,
        double hitRate,
        double ttftP50Ms,
        double ttftP99Ms,
        double itlP50Ms,
        double itlP99Ms,
        double throughputTokensPerS,
        long kvBytesMoved,
        long localPrefills,
        int errors,
        List<RequestResult> requests,
        java.util.Map<String, TenantResult> tenants) {

    /** These figures with each tenant's ({@code bench route --tenants}). */
    PolicyResult withTenants(java.util.Map<String, TenantResult> tenants) {
        return new PolicyResult(
                policy,
                hitRate,
                ttftP50Ms,
                ttftP99Ms,
                itlP50Ms,
                itlP99Ms,
                throughputTokensPerS,
                kvBytesMoved,
                localPrefills,
                errors,
                requests,
                tenants);
    }

    /**
     * @param wallSeconds how long the replay took on the wall clock, first send to last answer
     * @param timeScale   simulated seconds per wall-clock second
     */
    static PolicyResult of(
            String policy,
            List<RequestResult> requests,
            double wallSeconds,
            double timeScale,
            long kvBytesMoved,
            long localPrefills) {
        long prompt = 0;
        long cached = 0;
        long generated = 0;
        int errors = 0;
        double[] ttft = new double[requests.size()];
        int itlCount = 0;
        for (RequestResult r : requests) {
            itlCount += r.itlMs().length;
        }
        double[] itl = new double[itlCount];
        int i = 0;
        int j = 0;
        for (RequestResult r : requests) {
            ttft[i++] = r.ok() ? r.ttftMs() * timeScale : Double.NaN;
            if (!r.ok()) {
                errors++;
                continue;
            }
            prompt += r.promptTokens();
            cached += r.cachedTokens();
            generated += r.completionTokens();
            for (double gap : r.itlMs()) {
                itl[j++] = gap * timeScale;
            }
        }
        Percentiles t = new Percentiles(ttft);
        Percentiles g = new Percentiles(java.util.Arrays.copyOf(itl, j));
        double simulatedSeconds = wallSeconds * timeScale;
        return new PolicyResult(
                policy,
                prompt == 0 ? 0 : (double) cached / prompt,
                t.at(50),
                t.at(99),
                g.at(50),
                g.at(99),
                simulatedSeconds > 0 ? generated / simulatedSeconds : 0,
                kvBytesMoved,
                localPrefills,
                errors,
                List.copyOf(requests),
                null);
    }
}
