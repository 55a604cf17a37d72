package dev.tandem.worker;

import dev.tandem.config.ConfigException;
import dev.tandem.config.ModelSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.engine.sim.SimEngine;
import dev.tandem.engine.sim.SimProfiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/** Builds the engine the configuration names (reference or sim), paced when the configuration asks for it. */
public final class EngineLoader {
    private EngineLoader() {}

    public static Engine load(ModelSettings model, int kvBlockSize) {
        Engine engine = loadModel(model, kvBlockSize);
        return model.paced()
                ? new PacedEngine(engine, model.emulatedDecodeStepMicros(), model.emulatedPrefillMicrosPerToken())
                : engine;
    }

    private static Engine loadModel(ModelSettings model, int kvBlockSize) {
        if (model.sim()) {
            try {
                return new SimEngine(SimProfiles.named(model.simProfile()), model.timeScale(), kvBlockSize);
            } catch (IllegalArgumentException e) {
                throw new ConfigException("model.sim-profile: " + e.getMessage());
            }
        }
        if (model.builtin() || model.openai()) {
            // Engine openai: the workers front a GPU server; this engine serves only a router in the same JVM.
            return ReferenceEngine.builtin(kvBlockSize);
        }
        Path tokenizer = model.tokenizer().isBlank() ? null : Path.of(model.tokenizer());
        try {
            return ReferenceEngine.load(Path.of(model.path()), tokenizer, kvBlockSize);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load model " + model.path() + ": " + e.getMessage(), e);
        }
    }
}
