package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.PickerSettings.CacheAware;
import dev.tandem.config.PickerSettings.Softmax;
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
 * {@code router.policy} and the scheduling profiles that override it: filters as names or as mappings
 * with parameters, what an override leaves out taken from the policy, and errors that name their key.
 * Each row is a {@code router} section (JSON, as the YAML reads).
 */
class SchedulingConfigTest {
    private static final NamedFilter NOT_DRAINING = new NamedFilter("not-draining");
    private static final SchedulingPolicy DEFAULT = SchedulingPolicy.named("default");
    private static final SchedulingPolicy SEED = SchedulingPolicy.named("seed");
    private static final SchedulerSettings CACHE_AWARE =
            new SchedulerSettings(List.of(NOT_DRAINING), List.of(), CacheAware.DEFAULTS);

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
                Arguments.of("{}", "default", DEFAULT.prefill(), DEFAULT.decode()),
                Arguments.of("{\"policy\": \"seed\"}", "seed", SEED.prefill(), SEED.decode()),
                Arguments.of(
                        "{\"policy\": \"round-robin\"}",
                        "round-robin",
                        profile(List.of(NOT_DRAINING)),
                        profile(List.of(NOT_DRAINING))),
                Arguments.of(
                        // an override replaces what it sets; its filters stay the policy's
                        """
                        {"policy": "seed", "decode-scheduling": {"scorers": [{"plugin": "kv-utilization", "weight": 3}]}}
                        """,
                        "seed",
                        SEED.prefill(),
                        profile(List.of(NOT_DRAINING), new WeightedPlugin("kv-utilization", 3))),
                Arguments.of(
                        """
                        {"prefill-scheduling": {"filters": ["not-draining",
                            {"plugin": "load-threshold", "max-queued-prefill-tokens": 1000}]}}
                        """,
                        "default",
                        new SchedulerSettings(
                                List.of(NOT_DRAINING, new LoadThreshold(1000, Long.MAX_VALUE, 0.95)),
                                DEFAULT.prefill().scorers()),
                        DEFAULT.decode()),
                Arguments.of(
                        """
                        {"policy": "least-loaded", "decode-scheduling": {"filters": [{"plugin": "not-draining"},
                            {"plugin": "load-threshold", "max-queued-prefill-tokens": "0",
                             "max-active-sequences": 12, "max-kv-utilization": "0.5"}]}}
                        """,
                        "least-loaded",
                        SchedulingPolicy.named("least-loaded").prefill(),
                        profile(
                                List.of(NOT_DRAINING, new LoadThreshold(0, 12, 0.5)),
                                new WeightedPlugin("least-loaded", 1))),
                Arguments.of(
                        "{\"decode-scheduling\": {\"filters\": [\"load-threshold\"], \"scorers\": []}}",
                        "default",
                        DEFAULT.prefill(),
                        profile(List.of(LoadThreshold.DEFAULTS))),
                Arguments.of(
                        "{\"prefill-scheduling\": {\"filters\": []}}",
                        "default",
                        new SchedulerSettings(List.of(), DEFAULT.prefill().scorers()),
                        DEFAULT.decode()),
                Arguments.of(
                        // SGLang's router defaults, in both pools
                        "{\"policy\": \"cache-aware\"}",
                        "cache-aware",
                        new SchedulerSettings(List.of(NOT_DRAINING), List.of(), new CacheAware(0.3, 64, 1.5, 1 << 20)),
                        CACHE_AWARE),
                Arguments.of(
                        """
                        {"policy": "cache-aware", "prefill-scheduling": {"picker": {"plugin": "cache-aware",
                            "cache-threshold": 0.5, "balance-abs-threshold": 8, "balance-rel-threshold": "1.25",
                            "max-tree-blocks": 1000}}}
                        """,
                        "cache-aware",
                        new SchedulerSettings(List.of(NOT_DRAINING), List.of(), new CacheAware(0.5, 8, 1.25, 1000)),
                        CACHE_AWARE),
                Arguments.of(
                        // the picker by name, on another policy's filters; its scorers must go
                        "{\"decode-scheduling\": {\"picker\": \"cache-aware\", \"scorers\": []}}",
                        "default",
                        DEFAULT.prefill(),
                        new SchedulerSettings(DEFAULT.decode().filters(), List.of(), CacheAware.DEFAULTS)),
                Arguments.of(
                        "{\"policy\": \"cache-aware\", \"decode-scheduling\": {\"picker\": \"max-score\"}}",
                        "cache-aware",
                        CACHE_AWARE,
                        profile(List.of(NOT_DRAINING))),
                Arguments.of(
                        // Dynamo's KV router defaults, in both pools: overlap weight 1 (in the scorer), temperature 0
                        "{\"policy\": \"dynamo\"}", "dynamo", dynamo(Softmax.DEFAULTS), dynamo(new Softmax(0.0, 0))),
                Arguments.of("""
                        {"policy": "dynamo", "decode-scheduling": {"picker": {"plugin": "softmax",
                            "temperature": "0.5", "seed": 42}}}
                        """, "dynamo", dynamo(Softmax.DEFAULTS), dynamo(new Softmax(0.5, 42))),
                Arguments.of(
                        // llm-d's precise-prefix-cache profile: prefix 2, KV utilization 1, the pool's queue 1
                        "{\"policy\": \"llm-d\"}", "llm-d", llmD("queued-prefill-tokens"), llmD("active-sequences")));
    }

    private static SchedulerSettings dynamo(Softmax picker) {
        return new SchedulerSettings(List.of(NOT_DRAINING), List.of(new WeightedPlugin("kv-block-cost", 1)), picker);
    }

    private static SchedulerSettings llmD(String queue) {
        return profile(
                List.of(NOT_DRAINING),
                new WeightedPlugin("prefix-overlap", 2),
                new WeightedPlugin("kv-utilization", 1),
                new WeightedPlugin(queue, 1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valid")
    void profilesAreThePolicysUnlessOverridden(
            String json, String policy, SchedulerSettings prefill, SchedulerSettings decode) {
        RouterSettings r = router(json);
        assertEquals(policy, r.policy());
        assertEquals(prefill, r.prefill());
        assertEquals(decode, r.decode());
    }

    static Stream<Arguments> invalid() {
        String filters = "{\"prefill-scheduling\": {\"filters\": [\"not-draining\", %s]}}";
        String picker = "{\"prefill-scheduling\": {\"picker\": %s}}";
        return Stream.of(
                Arguments.of("{\"policy\": \"fastest\"}", "'router.policy' must be one of [default, seed, round-robin"),
                Arguments.of("{\"policy\": {\"name\": \"seed\"}}", "'router.policy' must be a string"),
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
                        "'router.decode-scheduling.scorers[0].plugin' is required"),
                Arguments.of(
                        picker.formatted("{\"plugin\": \"cache-aware\", \"cache-threshold\": 1.5}"),
                        "'router.prefill-scheduling.picker.cache-threshold' must be between 0.0 and 1.0"),
                Arguments.of(
                        picker.formatted("{\"plugin\": \"cache-aware\", \"balance-abs-threshold\": 0.5}"),
                        "'router.prefill-scheduling.picker.balance-abs-threshold' must be an integer"),
                Arguments.of(
                        picker.formatted("{\"plugin\": \"cache-aware\", \"max-tree-blocks\": 0}"),
                        "'router.prefill-scheduling.picker.max-tree-blocks' must be between 1"),
                Arguments.of(
                        picker.formatted("{\"plugin\": \"cache-aware\", \"cache-treshold\": 0.2}"),
                        "unknown configuration key 'router.prefill-scheduling.picker.cache-treshold'"),
                Arguments.of(
                        picker.formatted("{\"plugin\": \"max-score\", \"cache-threshold\": 0.2}"),
                        "unknown configuration key 'router.prefill-scheduling.picker.cache-threshold'"),
                Arguments.of(
                        picker.formatted("\"fastest\""),
                        "'router.prefill-scheduling.picker.plugin' must be one of [max-score, cache-aware, softmax]"),
                Arguments.of(
                        picker.formatted("{\"plugin\": \"softmax\", \"temperature\": -1}"),
                        "'router.prefill-scheduling.picker.temperature' must be between 0.0 and 100.0"),
                Arguments.of(
                        picker.formatted("{\"plugin\": \"softmax\", \"temprature\": 1}"),
                        "unknown configuration key 'router.prefill-scheduling.picker.temprature'"),
                Arguments.of(picker.formatted("{}"), "'router.prefill-scheduling.picker.plugin' is required"),
                Arguments.of(picker.formatted("7"), "'router.prefill-scheduling.picker' must be a name or a mapping"),
                Arguments.of(
                        "{\"decode-scheduling\": {\"picker\": \"cache-aware\"}}",
                        "'router.decode-scheduling.scorers' must be empty with the cache-aware picker"),
                Arguments.of("""
                        {"policy": "cache-aware", "decode-scheduling": {"scorers": [{"plugin": "least-loaded"}]}}
                        """, "'router.decode-scheduling.scorers' must be empty with the cache-aware picker"));
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

    @Test
    void withPolicySwitchesBothProfiles() {
        RouterSettings seed = TestSettings.withPolicy(TandemConfig.defaults().router(), "seed");
        assertEquals(router("{\"policy\": \"seed\"}"), seed);
        assertThrows(ConfigException.class, () -> TestSettings.withPolicy(seed, "fastest"));
    }

    @Test
    void cacheAwareLearnsFromRoutedPrefixesAndNeverPrefillsLocally() {
        SchedulingPolicy cacheAware = SchedulingPolicy.named("cache-aware");
        assertEquals(SchedulingPolicy.PrefixSource.ROUTED, cacheAware.prefixes());
        assertEquals(SchedulingPolicy.LocalPrefill.NEVER, cacheAware.localPrefill());
        for (String name : List.of("default", "prefill-cost", "seed", "round-robin", "least-loaded")) {
            assertEquals(
                    SchedulingPolicy.PrefixSource.INDEX,
                    SchedulingPolicy.named(name).prefixes(),
                    name);
            // Only the KV-aware default (and its predecessor) prefill on the decode worker; the baselines are
            // KV-blind. The default weighs it in time, its predecessor whenever the rest fits.
            SchedulingPolicy.LocalPrefill expected = switch (name) {
                case "default" -> SchedulingPolicy.LocalPrefill.WHEN_FASTER;
                case "prefill-cost" -> SchedulingPolicy.LocalPrefill.UP_TO_MAX;
                default -> SchedulingPolicy.LocalPrefill.NEVER;
            };
            assertEquals(expected, SchedulingPolicy.named(name).localPrefill(), name);
        }
        assertEquals(cacheAware, router("{\"policy\": \"cache-aware\"}").schedulingPolicy());
        assertEquals(
                router("{\"policy\": \"cache-aware\"}"),
                TestSettings.withPolicy(TandemConfig.defaults().router(), "cache-aware"));
    }

    @Test
    void theCacheAwarePickerTakesNoScorers() {
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> new SchedulerSettings(
                        List.of(), List.of(new WeightedPlugin("least-loaded", 1)), CacheAware.DEFAULTS));
        assertTrue(e.getMessage().contains("takes no scorers"), e.getMessage());
    }
}
