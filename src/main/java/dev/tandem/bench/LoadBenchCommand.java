package dev.tandem.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tandem bench load}: its options, checked, then {@link LoadBench}. */
@Command(
        name = "load",
        mixinStandardHelpOptions = true,
        description = "Streamed load against a no-work SSE upstream, nginx in front of it, and Tandem with zero-cost"
                + " workers (over HTTPS too, as tandem-tls): the latency and throughput Tandem adds.")
public final class LoadBenchCommand implements Callable<Integer> {
    static final List<String> TARGETS = List.of("direct", "nginx", "tandem", "tandem-tls", "tandem-traced");

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--concurrency", defaultValue = "64", description = "streams at once (default ${DEFAULT-VALUE})")
    int concurrency;

    @Option(names = "--requests", defaultValue = "2000", description = "requests per target (default ${DEFAULT-VALUE})")
    int requests;

    @Option(names = "--max-tokens", defaultValue = "128", description = "tokens per stream (default ${DEFAULT-VALUE})")
    int maxTokens;

    @Option(
            names = "--rate",
            defaultValue = "0",
            description = "Poisson arrivals per second instead of --concurrency back-to-back streams (0 = off)")
    double rate;

    @Option(
            names = "--itl-ms",
            defaultValue = "0",
            description = "time between a stream's tokens, the same on every target (default 0: as fast as"
                    + " each can, which saturates the CPU; 20 is a served 8B model's pace)")
    int itlMs;

    @Option(
            names = "--topology",
            defaultValue = "embedded",
            description = "tandem as one JVM (embedded) or router, prefill and decode JVMs (processes)")
    String topology;

    @Option(
            names = "--prefill",
            defaultValue = "1",
            description = "zero-cost prefill workers (default ${DEFAULT-VALUE})")
    int prefill;

    @Option(names = "--decode", defaultValue = "1", description = "zero-cost decode workers (default ${DEFAULT-VALUE})")
    int decode;

    @Option(
            names = "--targets",
            split = ",",
            defaultValue = "direct,nginx,tandem",
            description = "targets, in order: direct, nginx, tandem, tandem-tls (Tandem with HTTPS on its API;"
                    + " needs --tls-cert, --tls-key and --tls-ca), tandem-traced (Tandem with tracing on, exporting"
                    + " to a sink in the bench; --trace-sample-rate) (default ${DEFAULT-VALUE})")
    List<String> targets;

    @Option(
            names = "--tls-cert",
            description = "tandem-tls: the API's certificate chain (PEM), naming 127.0.0.1 (the client checks it)")
    Path tlsCert;

    @Option(
            names = "--trace-sample-rate",
            defaultValue = "0.1",
            description = "tandem-traced: tracing.sample-rate (default ${DEFAULT-VALUE})")
    double traceSampleRate;

    @Option(names = "--tls-key", description = "tandem-tls: the certificate's private key (PEM)")
    Path tlsKey;

    @Option(names = "--tls-ca", description = "tandem-tls: the CA (PEM) the load client trusts the certificate by")
    Path tlsCa;

    @Option(
            names = "--max-seconds",
            defaultValue = "600",
            description = "stop issuing requests after this long per target")
    long maxSeconds;

    @Option(
            names = "--warmup",
            defaultValue = "5000",
            description = "short streams (" + LoadBench.WARM_UP_TOKENS + " tokens) per target before measuring, so the"
                    + " JIT has compiled what is measured (default ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--out", required = true, description = "directory for summary.json, results.csv, ttft.svg")
    Path out;

    @Override
    public Integer call() throws Exception {
        String invalid = invalid();
        if (invalid != null) {
            spec.commandLine().getErr().println("tandem bench load: " + invalid);
            return 2;
        }
        LoadBench.run(
                new LoadBench.Options(
                        concurrency,
                        requests,
                        maxTokens,
                        rate,
                        itlMs,
                        topology,
                        prefill,
                        decode,
                        List.copyOf(targets),
                        maxSeconds,
                        warmup,
                        out,
                        targets.contains("tandem-tls") ? new LoadBench.Tls(tlsCert, tlsKey, tlsCa) : null,
                        traceSampleRate),
                System.out);
        return 0;
    }

    private String invalid() {
        if (concurrency < 1 || concurrency > 10_000) {
            return "--concurrency must be 1 to 10000";
        }
        if (requests < 1 || requests > 10_000_000) {
            return "--requests must be 1 to 10000000";
        }
        if (maxTokens < 1 || maxTokens > 100_000) {
            return "--max-tokens must be 1 to 100000";
        }
        if (rate < 0 || Double.isNaN(rate)) {
            return "--rate must be 0 (closed loop) or more";
        }
        if (!(traceSampleRate >= 0 && traceSampleRate <= 1)) {
            return "--trace-sample-rate must be 0 to 1";
        }
        if (itlMs < 0 || itlMs > 10_000) {
            return "--itl-ms must be 0 to 10000";
        }
        if (!topology.equals("embedded") && !topology.equals("processes")) {
            return "--topology must be embedded or processes";
        }
        if (prefill < 1 || prefill > 64 || decode < 1 || decode > 64) {
            return "--prefill and --decode must be 1 to 64";
        }
        if (warmup < 0 || warmup > 1_000_000) {
            return "--warmup must be 0 to 1000000";
        }
        if (maxSeconds < 1) {
            return "--max-seconds must be at least 1";
        }
        for (String t : targets) {
            if (!TARGETS.contains(t)) {
                return "unknown target '" + t + "'; known: " + String.join(", ", TARGETS);
            }
        }
        if (targets.isEmpty() || targets.stream().distinct().count() != targets.size()) {
            return "--targets must name each target at most once";
        }
        return invalidTls();
    }

    /** tandem-tls needs all three files, readable; without it they would go unused, which is refused too. */
    private String invalidTls() {
        boolean any = tlsCert != null || tlsKey != null || tlsCa != null;
        if (!targets.contains("tandem-tls")) {
            return any
                    ? "--tls-cert, --tls-key and --tls-ca are for the tandem-tls target, which --targets lacks"
                    : null;
        }
        if (tlsCert == null || tlsKey == null || tlsCa == null) {
            return "the tandem-tls target needs --tls-cert, --tls-key and --tls-ca (PEM files)";
        }
        for (Path file : List.of(tlsCert, tlsKey, tlsCa)) {
            if (!Files.isReadable(file)) {
                return file + " is not a readable file";
            }
        }
        return null;
    }
}
