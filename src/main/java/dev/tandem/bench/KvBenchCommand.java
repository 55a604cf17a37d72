package dev.tandem.bench;

import dev.tandem.cluster.ClusterNode;
import dev.tandem.cluster.LoopbackClusterPorts;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.WorkerSettings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tandem bench kv}: KV transfer between two JVMs over the clustered event bus, next to raw
 * loopback TCP in the same run. Starts the other JVM itself ({@code bench kv-peer}) on this machine's
 * loopback, in a cluster of its own.
 */
@Command(
        name = "kv",
        mixinStandardHelpOptions = true,
        description = "KV transfer MiB/s between two JVMs: the clustered event bus next to raw loopback TCP.")
public final class KvBenchCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--sizes",
            split = ",",
            defaultValue = "1,4,16,64,256",
            description = "cache sizes in MiB (default ${DEFAULT-VALUE})")
    List<Integer> sizes;

    @Option(
            names = "--repeats",
            defaultValue = "5",
            description = "transfers per size and path at the least; the median counts (default ${DEFAULT-VALUE})")
    int repeats;

    @Option(
            names = "--min-mib",
            defaultValue = "512",
            description = "MiB each path carries per size at the least, in more transfers than --repeats if need be"
                    + " (default ${DEFAULT-VALUE})")
    int minMib;

    @Option(
            names = "--chunk-kib",
            description = "chunk size in KiB (default ${DEFAULT-VALUE}, worker.kv-chunk-bytes' default)")
    int chunkKib = WorkerSettings.DEFAULT_KV_CHUNK_BYTES >> 10;

    @Option(
            names = "--window",
            defaultValue = "8",
            description = "chunks on their way to the socket at once (default ${DEFAULT-VALUE}, as the workers send)")
    int window;

    @Option(
            names = "--warmup-mib",
            defaultValue = "2048",
            description = "MiB sent over each path before measuring, for the JIT (default ${DEFAULT-VALUE})")
    int warmupMib;

    @Option(names = "--out", description = "directory for summary.json")
    Path out;

    @Override
    public Integer call() throws Exception {
        if (sizes.isEmpty() || sizes.stream().anyMatch(s -> s < 1 || s > 1024) || repeats < 1 || repeats > 100) {
            spec.commandLine().getErr().println("tandem bench kv: each size must be 1 to 1024 MiB, --repeats 1 to 100");
            return 2;
        }
        if (chunkKib < 4
                || chunkKib > 65536
                || window < 1
                || window > 4096
                || warmupMib < 0
                || warmupMib > 65536
                || minMib < 0
                || minMib > 65536) {
            spec.commandLine()
                    .getErr()
                    .println("tandem bench kv: --chunk-kib must be 4 to 65536, --window 1 to 4096, --warmup-mib and"
                            + " --min-mib 0 to 65536");
            return 2;
        }
        String name = "bench-kv-" + UUID.randomUUID().toString().substring(0, 8);
        int port = LoopbackClusterPorts.base(8);
        ClusterSettings cluster = new ClusterSettings(name, "127.0.0.1", port, List.of("127.0.0.1:" + port));
        ClusterNode node =
                ClusterNode.start(cluster, TandemConfig.defaults().router()).await();
        Process peer = startPeer(name, port);
        try {
            int peerTcp = awaitReady(peer);
            System.out.println("kv bench: 2 JVMs on loopback, chunks of " + chunkKib + " KiB, " + warmupMib
                    + " MiB of warm-up a path, median of " + repeats + " transfers or of as many as carry " + minMib
                    + " MiB");
            KvBench.Result result = new KvBench(
                            node.vertx(), peerTcp, chunkKib << 10, repeats, minMib, window, warmupMib)
                    .run(List.copyOf(sizes), System.out);
            if (out != null) {
                Files.createDirectories(out);
                Files.writeString(out.resolve("summary.json"), result.summary().encodePrettily() + "\n");
                System.out.println("wrote " + out.resolve("summary.json"));
            }
            return 0;
        } finally {
            peer.getOutputStream().close();
            if (!peer.waitFor(10, TimeUnit.SECONDS)) {
                peer.destroyForcibly();
            }
            node.close().await();
        }
    }

    /** This JVM's java and class path, running the peer subcommand: the same code on both ends. */
    private static Process startPeer(String clusterName, int port) throws IOException {
        List<String> command = BenchProcesses.tandem(
                List.of("bench", "kv-peer", "--cluster-name", clusterName, "--join", "127.0.0.1:" + port));
        return new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
    }

    /**
     * Reads what the peer prints after READY until it exits. The peer runs with this JVM's options, so a
     * {@code -Xlog:gc} given to the bench logs there too; with no reader, the pipe fills and the peer blocks.
     */
    private static void drain(BufferedReader lines) {
        Thread drainer = new Thread(
                () -> {
                    try {
                        while (lines.readLine() != null) {
                            // discarded: the bench's output is its table
                        }
                    } catch (IOException e) {
                        // the peer is gone
                    }
                },
                "kv-peer-output");
        drainer.setDaemon(true);
        drainer.start();
    }

    private static int awaitReady(Process peer) throws IOException {
        BufferedReader lines = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String line;
        while ((line = lines.readLine()) != null) {
            if (line.startsWith("READY ")) {
                drain(lines);
                return Integer.parseInt(line.substring(6).trim());
            }
            if (System.nanoTime() > deadline) {
                break;
            }
        }
        throw new IOException("the peer JVM did not start (exit " + (peer.isAlive() ? "-" : peer.exitValue()) + ")");
    }
}
