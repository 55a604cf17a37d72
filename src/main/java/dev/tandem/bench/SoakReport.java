package dev.tandem.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Writes a soak's results: {@code summary.json} (options, target, totals, one row per minute, the end state,
 * GC pauses, checks), {@code minutes.csv} (the same rows) and {@code soak.svg}. A figure that could not be
 * measured is null in JSON and empty in CSV, never NaN.
 */
final class SoakReport {
    private SoakReport() {}

    /** One minute's row: what the client saw, then the target's state at the minute's end. */
    static JsonObject row(SoakMinute m, TargetSample t) {
        JsonObject errors = new JsonObject();
        m.errors().forEach((kind, n) -> errors.put(kind.key(), n));
        JsonObject row = new JsonObject()
                .put("minute", m.minute())
                .put("requests", m.requests())
                .put("completed", m.completed())
                .put("cancelled", m.cancelled())
                .put("errors", m.errorsTotal())
                .put("errorsByKind", errors)
                .put("ttftP50Ms", number(m.ttftP50Ms()))
                .put("ttftP99Ms", number(m.ttftP99Ms()))
                .put("e2eP50Ms", number(m.e2eP50Ms()))
                .put("e2eP99Ms", number(m.e2eP99Ms()));
        target(row, t);
        return row;
    }

    /** The target's fields into {@code into}. */
    static JsonObject target(JsonObject into, TargetSample t) {
        for (Map.Entry<String, ToDoubleFunction<TargetSample>> f : TargetSample.FIELDS.entrySet()) {
            into.put(f.getKey(), number(f.getValue().applyAsDouble(t)));
        }
        return into;
    }

    static JsonObject gcPauses(GcPauses p) {
        return p == null
                ? null
                : new JsonObject()
                        .put("count", p.count())
                        .put("totalMs", number(p.totalMs()))
                        .put("p50Ms", number(p.p50Ms()))
                        .put("p99Ms", number(p.p99Ms()))
                        .put("maxMs", number(p.maxMs()))
                        .put("fullCount", p.fullCount())
                        .put("explicitCount", p.explicitCount())
                        .put("explicitTotalMs", number(p.explicitTotalMs()))
                        .put("startupCount", p.startupCount())
                        .put("startupTotalMs", number(p.startupTotalMs()));
    }

    static JsonObject checks(SoakChecks c) {
        return new JsonObject()
                .put("baselineMinute", c.baselineMinute())
                .put("heapAfterGcEndOverMinute10", number(c.heapAfterGcEndOverMinute10()))
                .put("rssEndOverMinute10", number(c.rssEndOverMinute10()))
                .put("maxMinuteTtftP99OverMedian", number(c.maxMinuteTtftP99OverMedian()))
                .put("errorsTotal", c.errorsTotal());
    }

    /** minutes.csv: a header, then one line per row, the columns in the rows' order, in snake case. */
    static String csv(JsonArray rows) {
        StringBuilder sb = new StringBuilder();
        if (rows.isEmpty()) {
            return sb.toString();
        }
        List<String> header = flat(rows.getJsonObject(0)).fieldNames().stream().toList();
        sb.append(String.join(",", header.stream().map(SoakReport::snake).toList()))
                .append('\n');
        for (int i = 0; i < rows.size(); i++) {
            JsonObject row = flat(rows.getJsonObject(i));
            sb.append(String.join(
                            ",",
                            header.stream()
                                    .map(h -> row.getValue(h) == null ? "" : String.valueOf(row.getValue(h)))
                                    .toList()))
                    .append('\n');
        }
        return sb.toString();
    }

    static void write(Path dir, JsonObject summary) throws IOException {
        Files.writeString(dir.resolve("summary.json"), summary.encodePrettily() + "\n");
        JsonArray rows = summary.getJsonArray("minutes");
        Files.writeString(dir.resolve("minutes.csv"), csv(rows));
        Files.writeString(dir.resolve("soak.svg"), SoakChart.svg(rows));
    }

    /** {@code errorsByKind} spread into {@code errors_http_4xx}, … columns. */
    private static JsonObject flat(JsonObject row) {
        JsonObject flat = new JsonObject();
        for (String key : row.fieldNames()) {
            if (row.getValue(key) instanceof JsonObject nested) {
                nested.forEach(e -> flat.put("errors_" + e.getKey(), e.getValue()));
            } else {
                flat.put(key, row.getValue(key));
            }
        }
        return flat;
    }

    /** {@code ttftP50Ms} → {@code ttft_p50_ms}. */
    static String snake(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
    }

    /** Null for NaN; whole numbers as integers (bytes, counts), others to three decimals (ms, ratios). */
    static Number number(double v) {
        if (!Double.isFinite(v)) {
            return null;
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return (long) v;
        }
        return Math.round(v * 1000) / 1000.0;
    }
}
