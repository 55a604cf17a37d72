package dev.tandem.bench;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tandem bench soak}: its options, checked, then {@link SoakBench}. */
@Command(
        name = "soak",
        mixinStandardHelpOptions = true,
        description = "Mixed traffic (SSE, JSON, chat sessions, WebSocket, cancels) at a steady Poisson rate for a long"
                + " time against an embedded Tandem (a child JVM with this JVM's options) or --target; a row per"
                + " minute of latency, errors and the target's heap after GC, RSS, threads, descriptors and KV.")
public final class SoakCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--minutes", required = true, description = "how long the traffic runs, in minutes")
    int minutes;

    @Option(names = "--rate", required = true, description = "requests per second (Poisson arrivals)")
    double rate;

    @Option(
            names = "--target",
            description = "a running Tandem's http://host:port (default: start an embedded tandem all as a child JVM)")
    String target;

    @Option(names = "--out", required = true, description = "directory for summary.json, minutes.csv, soak.svg, gc.log")
    Path out;

    @Option(
            names = "--max-in-flight",
            defaultValue = "512",
            description = "requests open at once at most; one due beyond is not sent and counts as an"
                    + " in_flight_cap error (default ${DEFAULT-VALUE})")
    int maxInFlight;

    @Option(
            names = "--request-timeout-s",
            defaultValue = "60",
            description = "a request not ended by then is a timeout error (default ${DEFAULT-VALUE})")
    int requestTimeoutS;

    @Option(names = "--seed", defaultValue = "42", description = "the mix's seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(
            names = "--websockets",
            defaultValue = "2",
            description = "long-lived WebSocket connections opened at the start; more open when each carries 64"
                    + " (default ${DEFAULT-VALUE})")
    int webSockets;

    @Option(
            names = "--gc-each-minute",
            arity = "0..1",
            defaultValue = "false",
            fallbackValue = "true",
            description = "embedded target: a full GC in a quiet gap at every minute's end, not only at minute 10"
                    + " and the end (each minute then shows the live heap, but G1 no longer runs its own old"
                    + " collections) (default ${DEFAULT-VALUE})")
    boolean gcEachMinute;

    @Option(names = "--api-key", defaultValue = "", description = "the target's API key, if it needs one")
    String apiKey;

    @Option(names = "--model", defaultValue = "", description = "the model to ask for (default: the first served)")
    String model;

    @Option(
            names = "--warmup-seconds",
            defaultValue = "120",
            description = "before the minutes: the rate rises from a tenth to --rate over the first half of this,"
                    + " holds it for the second, and what it sends is reported apart (a JIT-cold target refuses"
                    + " at rates it then serves) (default ${DEFAULT-VALUE})")
    int warmupSeconds;

    /** A "minute" of fewer seconds, so a test runs several minutes' rows in seconds. */
    @Option(names = "--seconds-per-minute", defaultValue = "60", hidden = true)
    int secondsPerMinute;

    @Override
    public Integer call() throws Exception {
        String invalid = invalid();
        if (invalid != null) {
            spec.commandLine().getErr().println("tandem bench soak: " + invalid);
            return 2;
        }
        SoakBench.run(options(), System.out);
        return 0;
    }

    SoakBench.Options options() throws URISyntaxException {
        return new SoakBench.Options(
                minutes,
                rate,
                target == null ? null : new URI(target),
                out,
                maxInFlight,
                requestTimeoutS,
                seed,
                webSockets,
                gcEachMinute,
                apiKey,
                model,
                secondsPerMinute,
                warmupSeconds);
    }

    String invalid() {
        if (minutes < 1 || minutes > 10_080) {
            return "--minutes must be 1 to 10080 (a week)";
        }
        if (!(rate > 0) || rate > 10_000 || Double.isInfinite(rate)) {
            return "--rate must be above 0 and at most 10000";
        }
        if (target != null) {
            try {
                SoakEndpoint.of(new URI(target), apiKey);
            } catch (URISyntaxException | IllegalArgumentException e) {
                return e instanceof IllegalArgumentException
                        ? e.getMessage()
                        : "--target must be an http://host:port URL, got " + target;
            }
        }
        if (maxInFlight < 1 || maxInFlight > 100_000) {
            return "--max-in-flight must be 1 to 100000";
        }
        if (requestTimeoutS < 1 || requestTimeoutS > 3600) {
            return "--request-timeout-s must be 1 to 3600";
        }
        if (webSockets < 1 || webSockets > 64) {
            return "--websockets must be 1 to 64";
        }
        if (warmupSeconds < 0 || warmupSeconds > 3600) {
            return "--warmup-seconds must be 0 to 3600";
        }
        if (secondsPerMinute < 1 || secondsPerMinute > 60) {
            return "--seconds-per-minute must be 1 to 60";
        }
        return null;
    }
}
