package dev.tandem.config;

import dev.tandem.config.SchedulerSettings.WeightedPlugin;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A named pair of scheduling profiles, chosen with {@code router.policy}; {@code router.prefill-scheduling}
 * and {@code router.decode-scheduling} override its parts.
 *
 * <ul>
 *   <li>{@code default}: prefill = not-draining; predicted-ttft 1 (queued + 6× uncached tokens, in seconds
 *       at each worker's measured rate). Decode = not-draining, load-threshold;
 *       session-affinity 2, prefix-overlap 4, active-sequences 1, kv-utilization 1. Local prefill when it is
 *       predicted faster than the best prefill worker. Reuse a cached prefix unless its holder is overloaded.
 *   <li>{@code prefill-cost}: the default before it predicted times, kept for comparison — prefill-cost 1
 *       (queued + 4× uncached tokens) and the same decode profile; local prefill whenever the rest fits.
 *   <li>{@code seed}: the seed's policies — prefill = not-draining; least-loaded 1. Decode = not-draining;
 *       session-affinity 1 (no session: round-robin).
 *   <li>{@code round-robin}: not-draining and no scorer, in both pools.
 *   <li>{@code least-loaded}: not-draining; least-loaded 1, in both pools.
 *   <li>{@code seed}, {@code round-robin} and {@code least-loaded} are KV-blind, as the routers they
 *       stand for: no local prefill (conditional disaggregation is a decision on the prefix index).
 *   <li>{@code cache-aware}: SGLang router's cache-aware policy, as a baseline — not-draining and the
 *       {@code cache-aware} picker ({@link PickerSettings.CacheAware}), in both pools, over this router's
 *       own record of what it routed where ({@link PrefixSource#ROUTED}); no local prefill.
 *   <li>{@code dynamo}: NVIDIA Dynamo's KV router, as a baseline — not-draining; kv-block-cost 1 (overlap weight
 *       1 × prefill blocks + decode blocks) and the {@code softmax} picker at temperature 0 (Dynamo's
 *       defaults), in both pools, over the prefix index; no local prefill.
 *   <li>{@code llm-d}: the llm-d inference scheduler's precise-prefix-cache configuration, as a baseline —
 *       not-draining; prefix-overlap 2 (its precise-prefix-cache-scorer), kv-utilization 1, and its
 *       queue-scorer 1 as the pool's queue (prefill: queued-prefill-tokens; decode: active-sequences); the
 *       max-score picker; over the prefix index; no local prefill.
 * </ul>
 *
 * <p>Where the baselines' defaults come from: benchmarks.md, "The dynamo and llm-d baselines".
 *
 * @param prefixes     what the profiles' {@code cachedBlocks} come from
 * @param localPrefill when a decode worker that holds a prompt's prefix prefills the rest itself (at most
 *                     {@code router.local-prefill-max-tokens}); it needs the prefix index
 */
public record SchedulingPolicy(
        String name,
        SchedulerSettings prefill,
        SchedulerSettings decode,
        PrefixSource prefixes,
        LocalPrefill localPrefill) {
    public static final String DEFAULT = "default";
    public static final String PREFILL_COST = "prefill-cost";
    public static final String CACHE_AWARE = "cache-aware";
    public static final String DYNAMO = "dynamo";
    public static final String LLM_D = "llm-d";

    /** Where a router learns which worker holds which of a prompt's leading blocks. */
    public enum PrefixSource {
        /** The prefix index every router builds from the workers' KV cache events: what they hold. */
        INDEX,
        /**
         * This router's own record of the prompts it routed to each worker, per pool (SGLang's approximate
         * trees): what it believes they hold. Not shared with other replicas; no index is consulted.
         */
        ROUTED
    }

    /** Whether, and when, a decode worker holding the prompt's prefix prefills the rest itself. */
    public enum LocalPrefill {
        /** Never: the KV-blind and routed policies. */
        NEVER,
        /** Whenever the rest is at most {@code router.local-prefill-max-tokens}. */
        UP_TO_MAX,
        /**
         * Within that bound, when its predicted time is no longer than the best prefill worker's plus the KV
         * transfer: a decode worker busy with other local prefills passes the prompt on.
         */
        WHEN_FASTER;

        public boolean allowed() {
            return this != NEVER;
        }
    }

    /** A policy over the prefix index, with local prefill when faster. */
    public SchedulingPolicy(String name, SchedulerSettings prefill, SchedulerSettings decode) {
        this(name, prefill, decode, PrefixSource.INDEX, LocalPrefill.WHEN_FASTER);
    }

    private static final Map<String, SchedulingPolicy> POLICIES = new LinkedHashMap<>();

    static {
        List<String> notDraining = List.of("not-draining");
        List<String> underThreshold = List.of("not-draining", SchedulerSettings.LoadThreshold.PLUGIN);
        SchedulerSettings decodeByPrefix = SchedulerSettings.of(
                underThreshold,
                List.of(
                        new WeightedPlugin("session-affinity", 2),
                        new WeightedPlugin("prefix-overlap", 4),
                        new WeightedPlugin("active-sequences", 1),
                        new WeightedPlugin("kv-utilization", 1)));
        add(new SchedulingPolicy(
                DEFAULT,
                // No load threshold: the scorer prices a queue in time, and a threshold in tokens turned away
                // the holder of a long conversation whenever a long prompt was in its queue.
                SchedulerSettings.of(notDraining, List.of(new WeightedPlugin("predicted-ttft", 1))),
                decodeByPrefix));
        add(new SchedulingPolicy(
                "seed",
                SchedulerSettings.of(notDraining, List.of(new WeightedPlugin("least-loaded", 1))),
                SchedulerSettings.of(notDraining, List.of(new WeightedPlugin("session-affinity", 1))),
                PrefixSource.INDEX,
                LocalPrefill.NEVER));
        add(new SchedulingPolicy(
                "round-robin",
                SchedulerSettings.of(notDraining, List.of()),
                SchedulerSettings.of(notDraining, List.of()),
                PrefixSource.INDEX,
                LocalPrefill.NEVER));
        add(new SchedulingPolicy(
                "least-loaded",
                SchedulerSettings.of(notDraining, List.of(new WeightedPlugin("least-loaded", 1))),
                SchedulerSettings.of(notDraining, List.of(new WeightedPlugin("least-loaded", 1))),
                PrefixSource.INDEX,
                LocalPrefill.NEVER));
        SchedulerSettings cacheAware = new SchedulerSettings(
                notDraining.stream()
                        .map(SchedulerSettings.FilterSettings::named)
                        .toList(),
                List.of(),
                PickerSettings.CacheAware.DEFAULTS);
        add(new SchedulingPolicy(CACHE_AWARE, cacheAware, cacheAware, PrefixSource.ROUTED, LocalPrefill.NEVER));
        addBaselines(notDraining);
        add(new SchedulingPolicy(
                PREFILL_COST,
                SchedulerSettings.of(underThreshold, List.of(new WeightedPlugin("prefill-cost", 1))),
                decodeByPrefix,
                PrefixSource.INDEX,
                LocalPrefill.UP_TO_MAX));
    }

    /** Dynamo's KV router and llm-d's scheduler with their published defaults (benchmarks.md). */
    private static void addBaselines(List<String> notDraining) {
        SchedulerSettings dynamo = new SchedulerSettings(
                notDraining.stream()
                        .map(SchedulerSettings.FilterSettings::named)
                        .toList(),
                List.of(new WeightedPlugin("kv-block-cost", 1)),
                PickerSettings.Softmax.DEFAULTS);
        add(new SchedulingPolicy(DYNAMO, dynamo, dynamo, PrefixSource.INDEX, LocalPrefill.NEVER));
        add(new SchedulingPolicy(
                LLM_D,
                SchedulerSettings.of(notDraining, llmD("queued-prefill-tokens")),
                SchedulerSettings.of(notDraining, llmD("active-sequences")),
                PrefixSource.INDEX,
                LocalPrefill.NEVER));
    }

    /**
     * llm-d's precise-prefix-cache profile: precise-prefix-cache-scorer 2, kv-cache-utilization-scorer 1,
     * queue-scorer 1 — the queue being {@code queue} in this pool.
     */
    private static List<WeightedPlugin> llmD(String queue) {
        return List.of(
                new WeightedPlugin("prefix-overlap", 2),
                new WeightedPlugin("kv-utilization", 1),
                new WeightedPlugin(queue, 1));
    }

    private static void add(SchedulingPolicy policy) {
        POLICIES.put(policy.name(), policy);
    }

    /** The policies' names, {@code default} first. */
    public static List<String> names() {
        return List.copyOf(POLICIES.keySet());
    }

    /** The policy of that name; an unknown name is a {@link ConfigException} listing the known ones. */
    public static SchedulingPolicy named(String name) {
        SchedulingPolicy policy = POLICIES.get(name);
        if (policy == null) {
            throw new ConfigException("unknown scheduling policy '" + name + "'; known: " + names());
        }
        return policy;
    }
}
