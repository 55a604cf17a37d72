package dev.tandem.bench;

import dev.tandem.engine.Engine;
import dev.tandem.engine.ModelConfig;
import dev.tandem.engine.gguf.GgufModel;
import dev.tandem.engine.gguf.GgufVocabularySpec;
import dev.tandem.engine.gguf.ModelShape;
import dev.tandem.engine.gguf.RandomGgufModel;
import dev.tandem.engine.reference.Llama2cCheckpointWriter;
import dev.tandem.engine.reference.ModelWeights;
import dev.tandem.engine.reference.ReferenceEngine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tandem bench engine}: the reference engine's tokens per second, one stream and batched. */
@Command(
        name = "engine",
        mixinStandardHelpOptions = true,
        description = "Decode tokens/s of the reference engine on a llama2.c checkpoint: one stream, then batches.")
public final class EngineBenchCommand implements Callable<Integer> {
    /** stories15M's shape (llama2.c): what the performance targets are stated for. */
    static final ModelConfig STORIES15M = new ModelConfig(288, 768, 6, 6, 6, 32000, 256, true);

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--model", description = "a GGUF file, or a llama2.c checkpoint (legacy float32 .bin)")
    Path model;

    @Option(names = "--tokenizer", description = "its tokenizer.bin (needed unless the vocabulary is 258 bytes)")
    Path tokenizer;

    @Option(
            names = "--write-checkpoint",
            description = "first write a random checkpoint to this file, and use it: FILE.gguf of --shape and --type,"
                    + " else llama2.c's format at stories15M's shape")
    Path writeCheckpoint;

    @Option(
            names = "--shape",
            defaultValue = "smollm2-135m",
            description =
                    "the GGUF checkpoint's shape: smollm2-135m, llama-3.2-1b or qwen2.5-0.5b (default ${DEFAULT-VALUE})")
    String shape;

    @Option(
            names = "--type",
            defaultValue = "q8_0",
            description =
                    "the GGUF checkpoint's tensor type: f32, f16, bf16, q8_0, q4_0, q4_k or q6_k (default ${DEFAULT-VALUE})")
    String type;

    @Option(
            names = "--seed",
            defaultValue = "15",
            description = "the random checkpoint's seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(
            names = "--batches",
            split = ",",
            defaultValue = "4,16,64",
            description = "batch sizes (default ${DEFAULT-VALUE})")
    List<Integer> batches;

    @Option(
            names = "--tokens",
            defaultValue = "200",
            description = "decode steps per stream (default ${DEFAULT-VALUE}, at most the context allows)")
    int tokens;

    @Option(
            names = "--repeat",
            defaultValue = "3",
            description = "runs per figure; the median is reported (default ${DEFAULT-VALUE})")
    int repeat;

    @Option(names = "--out", description = "directory for summary.json")
    Path out;

    @Override
    public Integer call() throws IOException {
        var err = spec.commandLine().getErr();
        if (model == null && writeCheckpoint == null) {
            err.println("tandem bench engine: give --model (and --tokenizer), or --write-checkpoint FILE");
            return 2;
        }
        if (tokens < 1 || repeat < 1 || repeat > 100 || batches.stream().anyMatch(b -> b < 1 || b > 1024)) {
            err.println(
                    "tandem bench engine: --tokens must be at least 1, --repeat 1 to 100 and each batch size 1 to 1024");
            return 2;
        }
        Path checkpoint = model;
        if (writeCheckpoint != null) {
            try {
                writeCheckpoint();
            } catch (IllegalArgumentException e) {
                err.println("tandem bench engine: " + e.getMessage());
                return 2;
            }
            checkpoint = checkpoint == null ? writeCheckpoint : checkpoint;
        }
        if (!Files.isRegularFile(checkpoint) || (tokenizer != null && !Files.isRegularFile(tokenizer))) {
            err.println(
                    "tandem bench engine: no such file: " + (Files.isRegularFile(checkpoint) ? tokenizer : checkpoint));
            return 2;
        }
        Engine engine;
        try {
            engine = GgufModel.isGguf(checkpoint)
                    ? GgufModel.load(checkpoint, 16)
                    : ReferenceEngine.load(checkpoint, tokenizer, 16);
        } catch (IllegalArgumentException | IOException e) {
            err.println("tandem bench engine: " + e.getMessage());
            return 2;
        }
        System.out.println("engine bench: " + engine.info().name() + " "
                + engine.info().config() + ", " + Runtime.getRuntime().availableProcessors() + " cores, matmul: "
                + ReferenceEngine.matmulKernel());
        EngineBench.Result result = new EngineBench(engine, tokens, repeat).run(List.copyOf(batches), System.out);
        if (out != null) {
            Files.createDirectories(out);
            Files.writeString(out.resolve("summary.json"), result.summary().encodePrettily() + "\n");
            System.out.println("wrote " + out.resolve("summary.json"));
        }
        return 0;
    }

    /** A random GGUF model (its vocabulary from --tokenizer, else bytes only), or a llama2.c checkpoint. */
    private void writeCheckpoint() throws IOException {
        if (!GgufModel.isGguf(writeCheckpoint)) {
            Llama2cCheckpointWriter.write(writeCheckpoint, ModelWeights.random(STORIES15M, 15));
            System.out.println("wrote a checkpoint of stories15M's shape to " + writeCheckpoint);
            return;
        }
        ModelShape s = ModelShape.named(shape);
        GgufVocabularySpec vocabulary =
                tokenizer != null ? GgufVocabularySpec.fromLlama2c(tokenizer, null) : GgufVocabularySpec.bytesOnly();
        long started = System.nanoTime();
        new RandomGgufModel(s, RandomGgufModel.parseType(type), vocabulary, seed).write(writeCheckpoint);
        System.out.printf(
                "wrote a random %s %s model to %s (%d MB, %.1f s)%n",
                s.name(),
                type,
                writeCheckpoint,
                Files.size(writeCheckpoint) >> 20,
                (System.nanoTime() - started) / 1e9);
    }
}
