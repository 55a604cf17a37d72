package dev.tandem.bench;

import dev.tandem.engine.sim.SimProfiles;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tandem bench scaling}: its options, checked, then {@link ScalingBench}. */
@Command(
        name = "scaling",
        mixinStandardHelpOptions = true,
        description = "Measure the scaling signals on a sim cluster at a base rate, twice the rate and twice the "
                + "output length.")
public final class ScalingBenchCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--prefill", defaultValue = "8", description = "sim prefill workers (default ${DEFAULT-VALUE})")
    int prefill;

    @Option(names = "--decode", defaultValue = "8", description = "sim decode workers (default ${DEFAULT-VALUE})")
    int decode;

    @Option(
            names = "--routers",
            defaultValue = "1",
            description = "router replicas; requests spread over them round-robin (default ${DEFAULT-VALUE})")
    int routers;

    @Option(
            names = "--profile",
            defaultValue = SimProfiles.DEFAULT,
            description = "sim profile: model on accelerator (default ${DEFAULT-VALUE})")
    String profile;

    @Option(names = "--rate", defaultValue = "8", description = "base arrivals per second (default ${DEFAULT-VALUE})")
    double rate;

    @Option(names = "--prompt-tokens", defaultValue = "8192", description = "prompt length (default ${DEFAULT-VALUE})")
    int promptTokens;

    @Option(
            names = "--output-tokens",
            defaultValue = "256",
            description = "base output length (default ${DEFAULT-VALUE})")
    int outputTokens;

    @Option(names = "--seconds", defaultValue = "60", description = "arrivals per scenario (default ${DEFAULT-VALUE})")
    int seconds;

    @Option(
            names = "--window-seconds",
            defaultValue = "15",
            description = "scaling.window-seconds (default ${DEFAULT-VALUE})")
    int windowSeconds;

    @Option(
            names = "--max-batch",
            defaultValue = "16",
            description = "worker.max-batch, the decode batch cap (default ${DEFAULT-VALUE})")
    int maxBatch;

    @Option(names = "--seed", defaultValue = "34", description = "arrival times' seed (default ${DEFAULT-VALUE})")
    long seed;

    @Override
    public Integer call() {
        String problem = check();
        if (problem != null) {
            spec.commandLine().getErr().println(problem);
            return 2;
        }
        ScalingBench.run(
                new ScalingBench.Options(
                        prefill,
                        decode,
                        routers,
                        profile,
                        rate,
                        promptTokens,
                        outputTokens,
                        seconds,
                        windowSeconds,
                        maxBatch,
                        seed),
                System.out);
        return 0;
    }

    private String check() {
        if (prefill < 1 || decode < 1 || prefill > 64 || decode > 64) {
            return "--prefill and --decode must be 1 to 64";
        }
        if (routers < 1 || routers > 16) {
            return "--routers must be 1 to 16";
        }
        if (!(rate > 0) || promptTokens < 1 || outputTokens < 1) {
            return "--rate, --prompt-tokens and --output-tokens must be positive";
        }
        if (windowSeconds < 1 || seconds < windowSeconds + 5) {
            return "--window-seconds must be at least 1 and --seconds at least 5 more";
        }
        if (!SimProfiles.names().contains(profile)) {
            return "--profile must be one of " + SimProfiles.names();
        }
        return maxBatch < 1 ? "--max-batch must be positive" : null;
    }
}
