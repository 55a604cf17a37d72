package dev.tandem.bench;

import dev.tandem.cluster.ClusterNode;
import dev.tandem.cluster.LoopbackClusterPorts;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.ClusterTls;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.WorkerSettings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tandem bench kv}: KV transfer between two JVMs over the clustered event bus, next to raw
 * loopback TCP in the same run. Starts the other JVM itself ({@code bench kv-peer}) on this machine's
 * loopback, in a cluster of its own. With {@code --cluster-tls-*} a second cluster, whose two members (one
 * more here, one more peer JVM) speak mutual TLS on the event bus, takes the same transfers too.
 */
@Command(
        name = "kv",
        mixinStandardHelpOptions = true,
        description = "KV transfer MiB/s between two JVMs: the clustered event bus (and with --cluster-tls-*, the"
                + " event bus under mutual TLS) next to raw loopback TCP.")
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

    @Option(
            names = "--cluster-tls-cert",
            description = "with --cluster-tls-key and --cluster-tls-ca: also measure the event bus under mutual TLS"
                    + " (a second pair of JVMs with cluster.tls-*); this member certificate (PEM) on both ends")
    Path clusterTlsCert;

    @Option(names = "--cluster-tls-key", description = "the member certificate's private key (PEM)")
    Path clusterTlsKey;

    @Option(names = "--cluster-tls-ca", description = "the CA (PEM) that issued the member certificate")
    Path clusterTlsCa;

    @Override
    public Integer call() throws Exception {
        String invalid = invalid();
        if (invalid != null) {
            spec.commandLine().getErr().println("tandem bench kv: " + invalid);
            return 2;
        }
        ClusterTls tls = clusterTlsCert == null
                ? ClusterTls.NONE
                : new ClusterTls(
                        clusterTlsCert.toAbsolutePath().toString(),
                        clusterTlsKey.toAbsolutePath().toString(),
                        clusterTlsCa.toAbsolutePath().toString());
        String name = "bench-kv-" + UUID.randomUUID().toString().substring(0, 8);
        int port = LoopbackClusterPorts.base(8);
        ClusterSettings cluster = new ClusterSettings(name, "127.0.0.1", port, List.of("127.0.0.1:" + port));
        ClusterNode node =
                ClusterNode.start(cluster, TandemConfig.defaults().router()).await();
        Process peer = null;
        ClusterNode tlsNode = null;
        Process tlsPeer = null;
        try {
            peer = startPeer(name, port, ClusterTls.NONE);
            if (tls.enabled()) {
                // A cluster of its own, under mutual TLS: the same transfers, one more pair of members.
                String tlsName = name + "-mtls";
                int tlsPort = LoopbackClusterPorts.base(8);
                tlsNode = ClusterNode.start(
                                new ClusterSettings(tlsName, "127.0.0.1", tlsPort, List.of("127.0.0.1:" + tlsPort))
                                        .withTls(tls),
                                TandemConfig.defaults().router())
                        .await();
                tlsPeer = startPeer(tlsName, tlsPort, tls);
            }
            int peerTcp = awaitReady(peer);
            if (tlsPeer != null) {
                awaitReady(tlsPeer);
            }
            System.out.println("kv bench: " + (tls.enabled() ? "2 JVMs a cluster, one with mutual TLS," : "2 JVMs")
                    + " on loopback, chunks of " + chunkKib + " KiB, " + warmupMib
                    + " MiB of warm-up a path, median of " + repeats + " transfers or of as many as carry " + minMib
                    + " MiB");
            KvBench.Result result = new KvBench(
                            node.vertx(),
                            tlsNode == null ? null : tlsNode.vertx(),
                            peerTcp,
                            chunkKib << 10,
                            repeats,
                            minMib,
                            window,
                            warmupMib)
                    .run(List.copyOf(sizes), System.out);
            if (out != null) {
                Files.createDirectories(out);
                Files.writeString(out.resolve("summary.json"), result.summary().encodePrettily() + "\n");
                System.out.println("wrote " + out.resolve("summary.json"));
            }
            return 0;
        } finally {
            stopPeer(tlsPeer);
            stopPeer(peer);
            if (tlsNode != null) {
                tlsNode.close().await();
            }
            node.close().await();
        }
    }

    /** Why the options cannot run, or null. */
    private String invalid() {
        if (sizes.isEmpty() || sizes.stream().anyMatch(s -> s < 1 || s > 1024) || repeats < 1 || repeats > 100) {
            return "each size must be 1 to 1024 MiB, --repeats 1 to 100";
        }
        if (chunkKib < 4
                || chunkKib > 65536
                || window < 1
                || window > 4096
                || warmupMib < 0
                || warmupMib > 65536
                || minMib < 0
                || minMib > 65536) {
            return "--chunk-kib must be 4 to 65536, --window 1 to 4096, --warmup-mib and --min-mib 0 to 65536";
        }
        return invalidTls();
    }

    /** All three cluster TLS files or none; each readable. */
    private String invalidTls() {
        List<Path> files = java.util.Arrays.asList(clusterTlsCert, clusterTlsKey, clusterTlsCa);
        long given = files.stream().filter(java.util.Objects::nonNull).count();
        if (given == 0) {
            return null;
        }
        if (given != 3) {
            return "--cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca go together: give all three (PEM"
                    + " files) to measure the event bus under mutual TLS, or none";
        }
        for (Path file : files) {
            if (!Files.isReadable(file)) {
                return file + " is not a readable file";
            }
        }
        return null;
    }

    /** Closes its input (the peer exits when it does), then kills it if it is still there after 10 s. */
    private static void stopPeer(Process peer) throws IOException, InterruptedException {
        if (peer == null) {
            return;
        }
        peer.getOutputStream().close();
        if (!peer.waitFor(10, TimeUnit.SECONDS)) {
            peer.destroyForcibly();
        }
    }

    /**
     * This JVM's java and class path, running the peer subcommand: the same code on both ends; with
     * {@code tls}, the peer joins with it (its event bus then speaks mutual TLS).
     */
    private static Process startPeer(String clusterName, int port, ClusterTls tls) throws IOException {
        List<String> args = new ArrayList<>(
                List.of("bench", "kv-peer", "--cluster-name", clusterName, "--join", "127.0.0.1:" + port));
        if (tls.enabled()) {
            args.addAll(List.of(
                    "--cluster-tls-cert", tls.cert(), "--cluster-tls-key", tls.key(), "--cluster-tls-ca", tls.ca()));
        }
        return new ProcessBuilder(BenchProcesses.tandem(args))
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
