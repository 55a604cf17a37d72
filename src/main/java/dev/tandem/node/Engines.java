package dev.tandem.node;

import dev.tandem.config.ConfigException;
import dev.tandem.config.ModelSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.OwnChatTemplateEngine;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.gguf.GgufFormatException;
import dev.tandem.engine.gguf.GgufModel;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.engine.sim.SimEngine;
import dev.tandem.engine.sim.SimProfiles;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.ChatTemplateLoader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The engine a node runs, chosen here at the composition root from {@code model.engine}: {@code reference}
 * (a llama2.c checkpoint, or the built-in model without a path), {@code sim} (a profile's timing), or
 * {@code openai} (the workers front a GPU server; the built-in engine only serves a router's tokenizer
 * in the same JVM). Paced when the configuration emulates an accelerator's step times.
 */
public final class Engines {
    private Engines() {}

    public static Engine forModel(ModelSettings model, int kvBlockSize) {
        Engine engine = switch (model.engine()) {
            case ModelSettings.SIM -> sim(model, kvBlockSize);
            case ModelSettings.OPENAI -> ReferenceEngine.builtin(kvBlockSize);
            default -> reference(model, kvBlockSize);
        };
        return model.paced()
                ? new PacedEngine(engine, model.emulatedDecodeStepMicros(), model.emulatedPrefillMicrosPerToken())
                : engine;
    }

    private static Engine sim(ModelSettings model, int kvBlockSize) {
        try {
            return new SimEngine(SimProfiles.named(model.simProfile()), model.timeScale(), kvBlockSize);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("model.sim-profile: " + e.getMessage());
        }
    }

    private static Engine reference(ModelSettings model, int kvBlockSize) {
        if (model.builtin()) {
            return ReferenceEngine.builtin(kvBlockSize);
        }
        Path tokenizer = model.tokenizer().isBlank() ? null : Path.of(model.tokenizer());
        try {
            if (GgufModel.isGguf(Path.of(model.path()))) {
                return GgufModel.load(Path.of(model.path()), kvBlockSize); // its tokenizer and template inside
            }
            Engine engine = ReferenceEngine.load(Path.of(model.path()), tokenizer, kvBlockSize);
            // A tokenizer inside a Hugging Face model directory brings the model's own chat template.
            ChatTemplate template = ChatTemplateLoader.besideTokenizer(model.tokenizer(), engine.chatTemplate());
            return template == engine.chatTemplate() ? engine : new OwnChatTemplateEngine(engine, template);
        } catch (GgufFormatException e) {
            throw new ConfigException("model.path " + model.path() + ": " + e.getMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load model " + model.path() + ": " + e.getMessage(), e);
        }
    }
}
