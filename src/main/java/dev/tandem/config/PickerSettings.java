package dev.tandem.config;

/**
 * A profile's picker as configured: {@code max-score} (the weighted sum's best, ties round-robin),
 * {@code cache-aware} (SGLang's router rule, with its parameters) or {@code softmax} (Dynamo's sampling at
 * a temperature). Given as a name or as a mapping with {@code plugin} and the picker's parameters.
 */
public sealed interface PickerSettings
        permits PickerSettings.MaxScore, PickerSettings.CacheAware, PickerSettings.Softmax {
    String plugin();

    /** The best weighted total; ties go round-robin. The picker of every policy but {@code cache-aware}. */
    record MaxScore() implements PickerSettings {
        public static final String PLUGIN = "max-score";
        public static final MaxScore INSTANCE = new MaxScore();

        @Override
        public String plugin() {
            return PLUGIN;
        }
    }

    /**
     * SGLang router's {@code cache_aware} policy: when the pool's load is imbalanced ({@code max - min >
     * balanceAbsThreshold} and {@code max > min × balanceRelThreshold}, over the routers' requests in
     * flight) the least loaded worker; otherwise the worker this router routed the longest leading part
     * of the prompt to, when that part is over {@code cacheThreshold} of the prompt; otherwise the worker
     * whose routed-prefix tree is smallest. {@code maxTreeBlocks} bounds each worker's tree.
     *
     * <p>The defaults are SGLang's router's ({@code sglang_router} {@code RouterArgs}: {@code
     * cache_threshold 0.3}, {@code balance_abs_threshold 64}, {@code balance_rel_threshold 1.5}, {@code
     * max_tree_size 2**26}; sgl-project/sglang, sgl-model-gateway/bindings/python/src/sglang_router/router_args.py,
     * https://github.com/sgl-project/sglang/blob/main/sgl-model-gateway/bindings/python/src/sglang_router/router_args.py).
     * SGLang's trees hold characters, Tandem's hold 16-token KV blocks: 2^26 characters at about 4 per token
     * are 2^20 blocks.
     *
     * @param cacheThreshold      the share of the prompt's full blocks a worker's tree must match, strictly
     *                            more, for the prompt to go there (0 to 1)
     * @param balanceAbsThreshold the in-flight difference between the busiest and idlest worker beyond which
     *                            (together with the relative one) the pool counts as imbalanced
     * @param balanceRelThreshold the busiest worker's in-flight count over the idlest's beyond which (with
     *                            the absolute one) the pool counts as imbalanced
     * @param maxTreeBlocks       the most blocks this router remembers having routed to one worker; the
     *                            least recently routed leaf blocks go first
     */
    record CacheAware(double cacheThreshold, long balanceAbsThreshold, double balanceRelThreshold, long maxTreeBlocks)
            implements PickerSettings {
        public static final String PLUGIN = "cache-aware";
        public static final CacheAware DEFAULTS = new CacheAware(0.3, 64, 1.5, 1L << 20);

        @Override
        public String plugin() {
            return PLUGIN;
        }

        static CacheAware read(ConfigSection s) {
            return new CacheAware(
                    s.decimal("cache-threshold", DEFAULTS.cacheThreshold, 0, 1),
                    s.integer("balance-abs-threshold", DEFAULTS.balanceAbsThreshold, 0, Integer.MAX_VALUE),
                    s.decimal("balance-rel-threshold", DEFAULTS.balanceRelThreshold, 0, 1_000_000),
                    s.integer("max-tree-blocks", DEFAULTS.maxTreeBlocks, 1, 1L << 40));
        }
    }

    /**
     * NVIDIA Dynamo's KV router selection over the weighted scores: at {@code temperature} 0 the best (ties
     * broken at random), above it a softmax draw over the scores rescaled between the worst and the best.
     * The draws are a pure function of {@code seed} and the decision's tick. Default temperature 0:
     * Dynamo's {@code router_temperature} default ({@code KvRouterConfig::default()}, ai-dynamo/dynamo,
     * lib/llm/src/kv_router/config.rs).
     *
     * @param temperature 0 (the best) up to 100; higher spreads the choice
     * @param seed        the draws' seed
     */
    record Softmax(double temperature, long seed) implements PickerSettings {
        public static final String PLUGIN = "softmax";
        public static final Softmax DEFAULTS = new Softmax(0.0, 0);

        @Override
        public String plugin() {
            return PLUGIN;
        }

        static Softmax read(ConfigSection s) {
            return new Softmax(
                    s.decimal("temperature", DEFAULTS.temperature, 0, 100),
                    s.integer("seed", DEFAULTS.seed, Long.MIN_VALUE, Long.MAX_VALUE));
        }
    }

    /** A {@code picker} entry: a name, or a mapping with {@code plugin} and parameters. */
    static PickerSettings read(ConfigSection p) {
        String plugin = p.string("plugin", "");
        PickerSettings picker = switch (plugin) {
            case MaxScore.PLUGIN -> MaxScore.INSTANCE;
            case CacheAware.PLUGIN -> CacheAware.read(p);
            case Softmax.PLUGIN -> Softmax.read(p);
            case "" -> null;
            default ->
                throw new ConfigException("'" + p.key("plugin") + "' must be one of [" + MaxScore.PLUGIN + ", "
                        + CacheAware.PLUGIN + ", " + Softmax.PLUGIN + "], got '" + plugin + "'");
        };
        p.rejectUnknownKeys(); // first: a misspelt 'plugin' is named as such
        if (picker == null) {
            throw new ConfigException("'" + p.key("plugin") + "' is required: the picker's name");
        }
        return picker;
    }
}
