package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.SchedulerSettings.LoadThreshold;
import dev.tandem.config.SchedulerSettings.NamedFilter;
import dev.tandem.config.SchedulerSettings.WeightedPlugin;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The scheduling profiles: filters as names or as mappings with parameters, what a profile leaves out
 * taken from the defaults, and errors that name their key. Each row is a {@code router} section (JSON,
 * as the YAML reads).
 */
class SchedulingConfigTest {
    private static final NamedFilter NOT_DRAINING = new NamedFilter("not-draining");
    private static final RouterSettings DEFAULTS = TandemConfig.defaults().router();

    private static RouterSettings router(String json) {
        return TandemConfig.fromJson(new JsonObject().put("router", new JsonObject(json)))
                .router();
    }

    private static SchedulerSettings profile(
            List<SchedulerSettings.FilterSettings> filters, WeightedPlugin... scorers) {
        return new SchedulerSettings(filters, List.of(scorers));
    }

    static Stream<Arguments> valid() {
        return Stream.of(
                Arguments.of("{}", DEFAULTS.prefill(), DEFAULTS.decode()),
                Arguments.of(
                        """
                        {"prefill-scheduling": {"filters": ["not-draining",
                            {"plugin": "load-threshold", "max-queued-prefill-tokens": 1000}]}}
                        """,
                        new SchedulerSettings(
                                List.of(NOT_DRAINING, new LoadThreshold(1000, Long.MAX_VALUE, 0.95)),
                                DEFAULTS.prefill().scorers()),
                        DEFAULTS.decode()),
                Arguments.of(
                        """
                        {"decode-scheduling": {"filters": [{"plugin": "not-draining"},
                            {"plugin": "load-threshold", "max-queued-prefill-tokens": "0",
                             "max-active-sequences": 12, "max-kv-utilization": "0.5"}],
                          "scorers": [{"plugin": "least-loaded"}]}}
                        """,
                        DEFAULTS.prefill(),
                        profile(
                                List.of(NOT_DRAINING, new LoadThreshold(0, 12, 0.5)),
                                new WeightedPlugin("least-loaded", 1))),
                Arguments.of(
                        "{\"decode-scheduling\": {\"filters\": [\"load-threshold\"], \"scorers\": []}}",
                        DEFAULTS.prefill(),
                        profile(List.of(LoadThreshold.DEFAULTS))),
                Arguments.of(
                        "{\"prefill-scheduling\": {\"filters\": []}}",
                        new SchedulerSettings(List.of(), DEFAULTS.prefill().scorers()),
                        DEFAULTS.decode()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valid")
    void filtersAreNamesOrMappings(String json, SchedulerSettings prefill, SchedulerSettings decode) {
        RouterSettings r = router(json);
        assertEquals(prefill, r.prefill());
        assertEquals(decode, r.decode());
    }

    static Stream<Arguments> invalid() {
        String filters = "{\"prefill-scheduling\": {\"filters\": [\"not-draining\", %s]}}";
        return Stream.of(
                Arguments.of(
                        filters.formatted("{\"plugin\": \"load-threshold\", \"max-kv-utilisation\": 0.9}"),
                        "'router.prefill-scheduling.filters[1].max-kv-utilisation'"),
                Arguments.of(
                        filters.formatted("{\"plugin\": \"load-threshold\", \"max-kv-utilization\": \"high\"}"),
                        "'router.prefill-scheduling.filters[1].max-kv-utilization' must be a number"),
                Arguments.of(
                        filters.formatted("{\"plugin\": \"load-threshold\", \"max-kv-utilization\": 1.5}"),
                        "'router.prefill-scheduling.filters[1].max-kv-utilization' must be between"),
                Arguments.of(
                        filters.formatted("{\"plugin\": \"load-threshold\", \"max-active-sequences\": 2.5}"),
                        "'router.prefill-scheduling.filters[1].max-active-sequences' must be an integer"),
                Arguments.of(
                        filters.formatted("{\"plugin\": \"load-threshold\", \"max-queued-prefill-tokens\": -1}"),
                        "'router.prefill-scheduling.filters[1].max-queued-prefill-tokens' must be between"),
                Arguments.of(
                        filters.formatted("{\"plugin\": \"not-draining\", \"max-active-sequences\": 3}"),
                        "'router.prefill-scheduling.filters[1].max-active-sequences'"),
                Arguments.of(filters.formatted("{}"), "'router.prefill-scheduling.filters[1].plugin' is required"),
                Arguments.of(
                        filters.formatted("7"), "'router.prefill-scheduling.filters[1]' must be a name or a mapping"),
                Arguments.of(
                        "{\"decode-scheduling\": {\"filters\": {\"plugin\": \"not-draining\"}}}",
                        "'router.decode-scheduling.filters' must be a list"),
                Arguments.of(
                        "{\"decode-scheduling\": {\"scorers\": [{\"weight\": 2}]}}",
                        "'router.decode-scheduling.scorers[0].plugin' is required"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void errorsNameTheKey(String json, String message) {
        ConfigException e = assertThrows(ConfigException.class, () -> router(json));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    @Test
    void theLoadThresholdDefaultIsTheWorkersOwnQueueLimit() {
        assertEquals(
                TandemConfig.defaults().worker().maxQueuedPrefillTokens(),
                LoadThreshold.DEFAULTS.maxQueuedPrefillTokens());
    }
}
