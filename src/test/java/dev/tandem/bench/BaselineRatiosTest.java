package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code bench route}'s ratios: each figure against the best baseline's, in the right direction. */
class BaselineRatiosTest {

    private static JsonObject figures(
            double hit, double ttft50, double ttft99, double itl50, double itl99, double tps) {
        return new JsonObject()
                .put("hit_rate", hit)
                .put("ttft_p50_ms", ttft50)
                .put("ttft_p99_ms", ttft99)
                .put("itl_p50_ms", itl50)
                .put("itl_p99_ms", itl99)
                .put("throughput_tokens_per_s", tps);
    }

    private static final JsonObject SUMMARY = new JsonObject()
            .put(
                    "policies",
                    new JsonObject()
                            .put("default", figures(0.195, 734, 14260, 20, 40, 5000))
                            .put("round-robin", figures(0.05, 1500, 20000, 21, 44, 4000))
                            .put("cache-aware", figures(0.214, 971, 14550, 22, 38, 4800))
                            // Not a baseline: never the best, however good.
                            .put("seed", figures(0.9, 1, 1, 1, 1, 99999)));

    @ParameterizedTest
    @CsvSource({
        "hit_rate, 0.214",
        "ttft_p50_ms, 971",
        "ttft_p99_ms, 14550",
        "itl_p50_ms, 21",
        "itl_p99_ms, 38",
        "throughput_tokens_per_s, 4800"
    })
    void theBestBaselineIsTheHighestOrTheLowestAsTheFigureGoes(String key, double best) {
        assertEquals(
                best, BaselineRatios.best(SUMMARY.getJsonObject("policies")).get(key));
    }

    @Test
    void ratiosOfAPolicy() {
        JsonObject policies = SUMMARY.getJsonObject("policies");
        Map<String, Double> r = BaselineRatios.of(policies.getJsonObject("default"), BaselineRatios.best(policies));
        assertEquals(0.195 / 0.214, r.get("hit_rate"), 1e-9);
        assertEquals(734.0 / 971, r.get("ttft_p50_ms"), 1e-9);
        assertEquals(14260.0 / 14550, r.get("ttft_p99_ms"), 1e-9);
        assertEquals(40.0 / 38, r.get("itl_p99_ms"), 1e-9);
    }

    @Test
    void theTableHasARowPerPolicyAndNothingWithoutBaselines() {
        String table = BaselineRatios.table(SUMMARY);
        assertTrue(table.contains("(cache-aware, round-robin)"), table);
        assertTrue(
                table.lines().anyMatch(l -> l.startsWith("default") && l.contains("0.91") && l.contains("0.76")),
                table);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("cache-aware") && l.contains("1.00")), table);
        JsonObject alone =
                new JsonObject().put("policies", new JsonObject().put("default", figures(0.2, 1, 2, 3, 4, 5)));
        assertEquals("", BaselineRatios.table(alone));
        assertFalse(BaselineRatios.best(alone.getJsonObject("policies")).containsKey("hit_rate"));
    }
}
