package dev.tandem.bench;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/** One target's numbers in {@code tandem bench load}, from its requests as the client saw them. */
record LoadTargetResult(
        String name,
        double ttftP50Ms,
        double ttftP99Ms,
        double itlP50Ms,
        double itlP99Ms,
        double e2eP50Ms,
        double tokensPerS,
        double requestsPerS,
        int errors) {

    static LoadTargetResult of(String name, List<RequestResult> results, double wallSeconds) {
        List<Double> ttft = new ArrayList<>();
        List<Double> itl = new ArrayList<>();
        List<Double> e2e = new ArrayList<>();
        long tokens = 0;
        int ok = 0;
        for (RequestResult r : results) {
            if (!r.ok()) {
                continue;
            }
            ok++;
            ttft.add(r.ttftMs());
            e2e.add(r.e2eMs());
            tokens += r.completionTokens();
            for (double gap : r.itlMs()) {
                itl.add(gap);
            }
        }
        Percentiles t = percentiles(ttft);
        Percentiles i = percentiles(itl);
        Percentiles e = percentiles(e2e);
        return new LoadTargetResult(
                name,
                t.at(50),
                t.at(99),
                i.at(50),
                i.at(99),
                e.at(50),
                tokens / wallSeconds,
                ok / wallSeconds,
                results.size() - ok);
    }

    private static Percentiles percentiles(List<Double> values) {
        return new Percentiles(values.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /** The target's entry in summary.json (exactly these keys: other tools read them). */
    JsonObject summary() {
        return new JsonObject()
                .put("ttft_p50_ms", number(ttftP50Ms))
                .put("ttft_p99_ms", number(ttftP99Ms))
                .put("itl_p50_ms", number(itlP50Ms))
                .put("itl_p99_ms", number(itlP99Ms))
                .put("e2e_p50_ms", number(e2eP50Ms))
                .put("tokens_per_s", number(tokensPerS))
                .put("requests_per_s", number(requestsPerS))
                .put("errors", errors);
    }

    /** JSON has no NaN: a quantity nothing measured (no request succeeded) is null. */
    static Double number(double x) {
        return Double.isNaN(x) ? null : round(x);
    }

    String csvRow() {
        return String.join(
                ",",
                name,
                Double.toString(round(ttftP50Ms)),
                Double.toString(round(ttftP99Ms)),
                Double.toString(round(itlP50Ms)),
                Double.toString(round(itlP99Ms)),
                Double.toString(round(e2eP50Ms)),
                Double.toString(round(tokensPerS)),
                Double.toString(round(requestsPerS)),
                Integer.toString(errors));
    }

    static final String CSV_HEADER =
            "target,ttft_p50_ms,ttft_p99_ms,itl_p50_ms,itl_p99_ms,e2e_p50_ms,tokens_per_s,requests_per_s,errors";

    static double round(double x) {
        return Double.isNaN(x) ? Double.NaN : Math.round(x * 1000) / 1000.0;
    }
}
