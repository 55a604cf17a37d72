package dev.tandem.config;

import java.util.List;
import java.util.Locale;

/**
 * Which model the workers load: a llama2.c checkpoint and tokenizer, or (both empty) the built-in
 * model; optionally paced to an accelerator's speed (see {@link dev.tandem.engine.PacedEngine}). With
 * {@code engine: sim} the workers simulate a served model instead (see
 * {@link dev.tandem.engine.sim.SimEngine}): no compute, the time a named profile says.
 *
 * @param emulatedDecodeStepMicros      least time one decode step takes (0 = as fast as the CPU computes)
 * @param emulatedPrefillMicrosPerToken least time prefill takes per prompt token (0 = as fast as the CPU)
 * @param engine                        {@code reference} (real math) or {@code sim}
 * @param simProfile                    the sim engine's profile (model on accelerator)
 * @param timeScale                     the sim engine's simulated seconds per wall-clock second
 * @param upstream                      engine {@code openai}: the vLLM or SGLang server a worker fronts
 */
public record ModelSettings(
        String path,
        String tokenizer,
        long emulatedDecodeStepMicros,
        long emulatedPrefillMicrosPerToken,
        String engine,
        String simProfile,
        double timeScale,
        UpstreamSettings upstream) {

    public static final String REFERENCE = "reference";
    public static final String SIM = "sim";
    /** Fronts an OpenAI-compatible GPU server in prefill/decode mode (vLLM, SGLang). */
    public static final String OPENAI = "openai";

    public static final List<String> ENGINES = List.of(REFERENCE, SIM, OPENAI);
    public static final String DEFAULT_SIM_PROFILE = "llama3-8b-h100";

    public ModelSettings(String path, String tokenizer) {
        this(path, tokenizer, 0, 0);
    }

    public ModelSettings(
            String path, String tokenizer, long emulatedDecodeStepMicros, long emulatedPrefillMicrosPerToken) {
        this(
                path,
                tokenizer,
                emulatedDecodeStepMicros,
                emulatedPrefillMicrosPerToken,
                REFERENCE,
                DEFAULT_SIM_PROFILE,
                1,
                UpstreamSettings.NONE);
    }

    static ModelSettings read(ConfigSection s) {
        ModelSettings m = new ModelSettings(
                s.string("path", ""),
                s.string("tokenizer", ""),
                s.integer("emulated-decode-step-us", 0L, 0, 10_000_000),
                s.integer("emulated-prefill-us-per-token", 0L, 0, 1_000_000),
                s.string("engine", REFERENCE).toLowerCase(Locale.ROOT),
                s.string("sim-profile", DEFAULT_SIM_PROFILE),
                s.decimal("time-scale", 1, 0.001, 100_000),
                UpstreamSettings.read(s));
        if (!ENGINES.contains(m.engine)) {
            throw new ConfigException("model.engine must be one of " + ENGINES + ", got '" + m.engine + "'");
        }
        if (m.openai() && m.upstream.url().isBlank()) {
            throw new ConfigException("model.engine openai needs model.upstream-url (the vLLM or SGLang server)");
        }
        s.rejectUnknownKeys();
        return m;
    }

    public boolean builtin() {
        return path.isBlank();
    }

    public boolean sim() {
        return SIM.equals(engine);
    }

    public boolean openai() {
        return OPENAI.equals(engine);
    }

    public boolean paced() {
        return emulatedDecodeStepMicros > 0 || emulatedPrefillMicrosPerToken > 0;
    }

    public ModelSettings withPath(String path) {
        return new ModelSettings(
                path,
                tokenizer,
                emulatedDecodeStepMicros,
                emulatedPrefillMicrosPerToken,
                engine,
                simProfile,
                timeScale,
                upstream);
    }

    public ModelSettings withTokenizer(String tokenizer) {
        return new ModelSettings(
                path,
                tokenizer,
                emulatedDecodeStepMicros,
                emulatedPrefillMicrosPerToken,
                engine,
                simProfile,
                timeScale,
                upstream);
    }

    /** The sim engine with that profile and time scale. */
    public ModelSettings withSim(String profile, double timeScale) {
        return new ModelSettings(
                path,
                tokenizer,
                emulatedDecodeStepMicros,
                emulatedPrefillMicrosPerToken,
                SIM,
                profile,
                timeScale,
                upstream);
    }

    /** Engine {@code openai} in front of that upstream. */
    public ModelSettings withUpstream(UpstreamSettings upstream) {
        return new ModelSettings(
                path,
                tokenizer,
                emulatedDecodeStepMicros,
                emulatedPrefillMicrosPerToken,
                OPENAI,
                simProfile,
                timeScale,
                upstream);
    }
}
