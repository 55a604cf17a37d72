package dev.tandem.bench;

import io.vertx.core.json.JsonObject;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** What the soak prints: a line per minute as it ends, and the end state, totals and checks. */
final class SoakConsole {
    private SoakConsole() {}

    /**
     * The line of a minute that just ended: its requests so far ({@code running} of them not ended yet; the
     * files have their final figures) and the target's state now.
     */
    static String minute(int of, SoakMinute m, int running, TargetSample t) {
        return String.format(
                Locale.ROOT,
                "minute %d/%d: %d sent, %d completed, %d cancelled, %s, %d running | TTFT p50 %s p99 %s ms"
                        + " | E2E p50 %s p99 %s ms | %s",
                m.minute(),
                of,
                m.requests() + running,
                m.completed(),
                m.cancelled(),
                errors(m),
                running,
                ms(m.ttftP50Ms()),
                ms(m.ttftP99Ms()),
                ms(m.e2eP50Ms()),
                ms(m.e2eP99Ms()),
                target(t));
    }

    static String errors(SoakMinute m) {
        String kinds = m.errors().entrySet().stream()
                .filter(e -> e.getValue() > 0)
                .map(e -> e.getKey().key() + " " + e.getValue())
                .collect(Collectors.joining(", "));
        return m.errorsTotal() + " errors" + (kinds.isEmpty() ? "" : " (" + kinds + ")");
    }

    static String target(TargetSample t) {
        return String.format(
                Locale.ROOT,
                "heap after GC %s MB%s, RSS %s MB, %s threads, %s fds, KV cache %s MB",
                mb(t.heapAfterLastGcBytes()),
                Double.isNaN(t.heapAfterGcBytes()) ? "" : " (after a full GC " + mb(t.heapAfterGcBytes()) + " MB)",
                mb(t.bestRssBytes()),
                count(Double.isNaN(t.procThreads()) ? t.threads() : t.procThreads()),
                count(Double.isNaN(t.procFds()) ? t.openFiles() : t.procFds()),
                mb(t.kvCacheBytes()));
    }

    static String end(JsonObject summary, TargetSample end, SoakMinute totals) {
        StringBuilder sb = new StringBuilder();
        sb.append("end (traffic stopped, requests ended, connections closed, one full GC): ")
                .append(target(end))
                .append('\n');
        sb.append(String.format(
                Locale.ROOT,
                "total: %d requests, %d completed, %d cancelled, %s | TTFT p50 %s p99 %s ms | E2E p50 %s p99 %s ms%n",
                totals.requests(),
                totals.completed(),
                totals.cancelled(),
                errors(totals),
                ms(totals.ttftP50Ms()),
                ms(totals.ttftP99Ms()),
                ms(totals.e2eP50Ms()),
                ms(totals.e2eP99Ms())));
        JsonObject gc = summary.getJsonObject("gcPauses");
        if (gc != null) {
            sb.append(String.format(
                    Locale.ROOT,
                    "GC pauses: %d, %s ms in all, p50 %s p99 %s max %s ms, %d full (and %d of the bench's own GCs,"
                            + " %s ms)%n",
                    gc.getInteger("count"),
                    gc.getValue("totalMs"),
                    gc.getValue("p50Ms"),
                    gc.getValue("p99Ms"),
                    gc.getValue("maxMs"),
                    gc.getInteger("fullCount"),
                    gc.getInteger("explicitCount"),
                    gc.getValue("explicitTotalMs")));
        }
        JsonObject checks = summary.getJsonObject("checks");
        sb.append("checks: ");
        sb.append(checks.fieldNames().stream()
                .map(k -> k + " " + checks.getValue(k))
                .collect(Collectors.joining(", ")));
        return sb.append('\n').toString();
    }

    /** Sent per kind, for the header of the totals. */
    static String kinds(Map<String, Integer> sent) {
        return sent.entrySet().stream()
                .map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", "));
    }

    private static String ms(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, v < 100 ? "%.1f" : "%.0f", v);
    }

    private static String mb(double bytes) {
        return Double.isNaN(bytes) ? "-" : String.format(Locale.ROOT, "%.1f", bytes / 1e6);
    }

    private static String count(double v) {
        return Double.isNaN(v) ? "-" : Long.toString(Math.round(v));
    }
}
