package dev.tandem.bench;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/** What {@code bench route --tenants} adds to a run: the routers' flow control, and the tenants' table. */
final class TenantRuns {
    private TenantRuns() {}

    /**
     * The routers' {@code flow-control} section. With tenants: each tenant's priority, fairness as asked, and
     * the default queue with its deadline in trace time. Without: a queue that never holds anyone back, so
     * policy comparisons measure the policies and not the router's queue.
     */
    static JsonObject flowControl(List<TenantSpec> tenants, boolean fairness, double timeScale) {
        if (tenants.isEmpty()) {
            return new JsonObject()
                    .put("max-queued-prefill-tokens", 1L << 40)
                    .put("max-queued-prefill-ms", 0)
                    .put("max-kv-fraction", 1.0)
                    .put("queue-timeout-ms", 3_600_000L);
        }
        JsonObject named = new JsonObject();
        for (TenantSpec t : tenants) {
            named.put(t.name(), new JsonObject().put("priority", t.priority()));
        }
        return new JsonObject()
                .put("tenants", named)
                .put("fairness", fairness)
                .put("queue-timeout-ms", SimCluster.scaledPeriod(30_000, timeScale));
    }

    /** One line per tenant: its TTFT percentiles, served, refused with Retry-After, lost, tokens, longest to a 429. */
    static String table(Map<String, TenantResult> tenants) {
        StringBuilder sb = new StringBuilder(String.format(
                "  %-16s %12s %12s %9s %9s %6s %12s %14s%n",
                "tenant", "ttft p50 ms", "ttft p99 ms", "admitted", "rejected", "lost", "tokens", "max to 429 ms"));
        tenants.forEach((name, t) -> sb.append(String.format(
                "  %-16s %12.0f %12.0f %9d %9d %6d %12d %14.0f%n",
                name,
                t.ttftP50Ms(),
                t.ttftP99Ms(),
                t.admitted(),
                t.rejected(),
                t.lost(),
                t.tokens(),
                t.rejectedMaxMs())));
        return sb.toString();
    }
}
