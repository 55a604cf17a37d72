package dev.tandem.config;

/**
 * Which model the workers load: a llama2.c checkpoint and tokenizer, or (both empty) the built-in
 * model; optionally paced to an accelerator's speed (see {@link dev.tandem.engine.PacedEngine}).
 *
 * @param emulatedDecodeStepMicros      least time one decode step takes (0 = as fast as the CPU computes)
 * @param emulatedPrefillMicrosPerToken least time prefill takes per prompt token (0 = as fast as the CPU)
 */
public record ModelSettings(
        String path, String tokenizer, long emulatedDecodeStepMicros, long emulatedPrefillMicrosPerToken) {

    public ModelSettings(String path, String tokenizer) {
        this(path, tokenizer, 0, 0);
    }

    static ModelSettings read(ConfigSection s) {
        ModelSettings m = new ModelSettings(
                s.string("path", ""),
                s.string("tokenizer", ""),
                s.integer("emulated-decode-step-us", 0L, 0, 10_000_000),
                s.integer("emulated-prefill-us-per-token", 0L, 0, 1_000_000));
        s.rejectUnknownKeys();
        return m;
    }

    public boolean builtin() {
        return path.isBlank();
    }

    public boolean paced() {
        return emulatedDecodeStepMicros > 0 || emulatedPrefillMicrosPerToken > 0;
    }

    public ModelSettings withPath(String path) {
        return new ModelSettings(path, tokenizer, emulatedDecodeStepMicros, emulatedPrefillMicrosPerToken);
    }

    public ModelSettings withTokenizer(String tokenizer) {
        return new ModelSettings(path, tokenizer, emulatedDecodeStepMicros, emulatedPrefillMicrosPerToken);
    }

    public ModelSettings withPacing(long decodeStepMicros, long prefillMicrosPerToken) {
        return new ModelSettings(path, tokenizer, decodeStepMicros, prefillMicrosPerToken);
    }
}
