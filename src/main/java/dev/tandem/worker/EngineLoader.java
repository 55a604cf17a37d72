package dev.tandem.worker;

import dev.tandem.config.ModelSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.reference.ReferenceEngine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/** Builds the engine the configuration names, paced when the configuration asks for it. */
public final class EngineLoader {
    private EngineLoader() {}

    public static Engine load(ModelSettings model, int kvBlockSize) {
        Engine engine = loadModel(model, kvBlockSize);
        return model.paced()
                ? new PacedEngine(engine, model.emulatedDecodeStepMicros(), model.emulatedPrefillMicrosPerToken())
                : engine;
    }

    private static Engine loadModel(ModelSettings model, int kvBlockSize) {
        if (model.builtin()) {
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
