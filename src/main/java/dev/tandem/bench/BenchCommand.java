package dev.tandem.bench;

import picocli.CommandLine.Command;

/** {@code tandem bench}: the benchmarks, each a subcommand. */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description = "Benchmarks that start their own loopback cluster and report numbers.",
        subcommands = {
            RouteBenchCommand.class,
            LoadBenchCommand.class,
            EngineBenchCommand.class,
            KvBenchCommand.class,
            KvPeerCommand.class,
            SoakCommand.class,
            ScalingBenchCommand.class
        })
public final class BenchCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.err);
    }
}
