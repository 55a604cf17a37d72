package dev.tandem.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One tenant's figures in a {@code bench route --tenants} run, in trace time: time to first token of its
 * served requests, how many were served ({@code admitted}) and refused with 429 and {@code Retry-After}
 * ({@code rejected}), the tokens it was served (prompt + generated), and {@code lost}: requests that ended any
 * other way (an error, no answer, a 429 without {@code Retry-After}) — flow control should lose none — and
 * {@code rejectedMaxMs}, the longest a refused request waited for its 429 (its deadline bounds it).
 */
record TenantResult(
        double ttftP50Ms, double ttftP99Ms, int admitted, int rejected, int lost, long tokens, double rejectedMaxMs) {

    /** Per tenant, in the order of {@code specs}; {@code owners} says whose each result is (by its index). */
    static Map<String, TenantResult> of(
            List<RequestResult> results, List<TenantSpec> owners, List<TenantSpec> specs, double timeScale) {
        Map<String, TenantResult> out = new LinkedHashMap<>();
        for (TenantSpec spec : specs) {
            List<Double> ttft = new ArrayList<>();
            int admitted = 0;
            int rejected = 0;
            int lost = 0;
            long tokens = 0;
            double rejectedMax = 0;
            for (RequestResult r : results) {
                if (owners.get(r.index()) != spec) {
                    continue;
                }
                if (r.ok()) {
                    admitted++;
                    ttft.add(r.ttftMs() * timeScale);
                    tokens += r.promptTokens() + r.completionTokens();
                } else if (r.error().startsWith("HTTP 429 " + TraceReplay.RETRY_AFTER)) {
                    rejected++;
                    rejectedMax = Math.max(rejectedMax, r.e2eMs() * timeScale);
                } else {
                    lost++;
                }
            }
            Percentiles p = new Percentiles(
                    ttft.stream().mapToDouble(Double::doubleValue).toArray());
            out.put(spec.name(), new TenantResult(p.at(50), p.at(99), admitted, rejected, lost, tokens, rejectedMax));
        }
        return out;
    }
}
