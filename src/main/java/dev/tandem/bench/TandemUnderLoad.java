package dev.tandem.bench;

import dev.tandem.config.TandemConfig;
import dev.tandem.engine.sim.SimProfiles;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The {@code tandem} and {@code tandem-tls} targets of {@code tandem bench load}: Tandem with zero-cost sim
 * workers (the {@code zero} profile: every step free, so only the router, the event bus and the workers' own
 * code cost anything), either embedded in the bench's JVM or as separate router, prefill and decode JVMs;
 * for {@code tandem-tls} its API speaks HTTPS.
 */
abstract class TandemUnderLoad implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on https?://127\\.0\\.0\\.1:(\\d+)");

    abstract int port();

    abstract String model();

    @Override
    public abstract void close();

    /** Zero-cost sim workers; with {@code itlMs} > 0 each decode step sleeps that long (no CPU), as a model's would. */
    static JsonObject configJson(int prefill, int decode, int itlMs) {
        return configJson(prefill, decode, itlMs, null, null);
    }

    /**
     * The same; with {@code tls}, the API speaks HTTPS with its certificate, with {@code tracing} (a
     * {@code tracing} section) it traces (and nothing else changes).
     */
    static JsonObject configJson(int prefill, int decode, int itlMs, LoadBench.Tls tls, JsonObject tracing) {
        JsonObject json = SimCluster.configJson(
                SimCluster.Shape.of(prefill, decode, 1, SimProfiles.named("zero"), 1.0, 16, 0, 0, false), "default");
        json.getJsonObject("model").put("emulated-decode-step-us", itlMs * 1000L);
        if (tls != null) {
            json.getJsonObject("http")
                    .put("tls-cert", tls.cert().toString())
                    .put("tls-key", tls.key().toString());
        }
        if (tracing != null) {
            json.put("tracing", tracing);
        }
        return json;
    }

    static TandemUnderLoad embedded(int prefill, int decode, int itlMs, LoadBench.Tls tls, JsonObject tracing) {
        TandemNode node = TandemNode.start(
                TandemConfig.fromJson(configJson(prefill, decode, itlMs, tls, tracing)),
                TandemNode.Plan.embedded(prefill, decode));
        SimCluster.awaitWorkers(node, prefill, decode);
        return new TandemUnderLoad() {
            @Override
            int port() {
                return node.router().httpPort();
            }

            @Override
            String model() {
                return node.engine().info().name();
            }

            @Override
            public void close() {
                node.close().await();
            }
        };
    }

    /** A router, {@code prefill} prefill and {@code decode} decode JVMs, the router last (it joins the others). */
    static TandemUnderLoad processes(
            int prefill, int decode, int itlMs, LoadBench.Tls tls, JsonObject tracing, Path dir) throws IOException {
        Files.createDirectories(dir);
        Path yaml = dir.resolve("tandem.yaml");
        // JSON is YAML: the same configuration the embedded target gets.
        Files.writeString(yaml, configJson(prefill, decode, itlMs, tls, tracing).encodePrettily());
        List<Process> processes = new ArrayList<>();
        try {
            for (int i = 1; i <= prefill; i++) {
                processes.add(launch(dir, "prefill-" + i, List.of("prefill", "--worker-id", "prefill-" + i), yaml));
            }
            for (int i = 1; i <= decode; i++) {
                processes.add(launch(dir, "decode-" + i, List.of("decode", "--worker-id", "decode-" + i), yaml));
            }
            Process router = launch(dir, "router", List.of("router"), yaml);
            processes.add(router);
            int port = awaitListening(router, dir.resolve("router.log"));
            awaitServed(port, prefill, decode, tls);
            return new TandemUnderLoad() {
                @Override
                int port() {
                    return port;
                }

                @Override
                String model() {
                    return SimProfiles.named("zero").model();
                }

                @Override
                public void close() {
                    BenchProcesses.stop(processes, 10);
                }
            };
        } catch (IOException | RuntimeException e) {
            BenchProcesses.stop(processes, 10);
            throw e;
        }
    }

    private static Process launch(Path dir, String name, List<String> mode, Path yaml) throws IOException {
        List<String> args = new ArrayList<>(mode);
        args.addAll(List.of("--config", yaml.toString()));
        List<String> command = BenchProcesses.tandem(args);
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".log").toFile())
                .start();
    }

    /** The port a router JVM (or {@code tandem all}) prints it listens on, once it does; its output is in {@code log}. */
    static int awaitListening(Process router, Path log) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log)) {
                Matcher m = LISTENING.matcher(Files.readString(log));
                if (m.find()) {
                    return Integer.parseInt(m.group(1));
                }
            }
            if (!router.isAlive()) {
                throw new IOException("the router JVM exited: see " + log);
            }
            sleep(100);
        }
        throw new IOException("the router JVM did not listen within 90 s: see " + log);
    }

    /** Until /v1/models lists the model: every worker registered and seen by the router. */
    private static void awaitServed(int port, int prefill, int decode, LoadBench.Tls tls) throws IOException {
        SSLContext trust = tls == null ? null : trusting(tls.ca());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            try {
                var c = (java.net.HttpURLConnection) java.net
                        .URI
                        .create((trust == null ? "http" : "https") + "://127.0.0.1:" + port + "/admin/workers")
                        .toURL()
                        .openConnection();
                if (c instanceof HttpsURLConnection secure) {
                    secure.setSSLSocketFactory(trust.getSocketFactory());
                }
                try (var in = c.getInputStream()) {
                    var workers = new JsonObject(new String(in.readAllBytes(), StandardCharsets.UTF_8))
                            .getJsonArray("workers");
                    if (count(workers, "prefill") == prefill && count(workers, "decode") == decode) {
                        return;
                    }
                }
            } catch (IOException notYet) {
                // the router is still starting
            }
            sleep(200);
        }
        throw new IOException("the router did not see " + prefill + " prefill and " + decode + " decode workers");
    }

    /** A client context that trusts the CA certificates of a PEM file (and checks host names, as by default). */
    static SSLContext trusting(Path caPem) throws IOException {
        try (InputStream in = Files.newInputStream(caPem)) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate ca : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                store.setCertificateEntry("ca-" + i++, ca);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IOException(caPem + ": " + e.getMessage(), e);
        }
    }

    private static long count(JsonArray workers, String role) {
        return workers.stream()
                .filter(w -> role.equals(((JsonObject) w).getString("role")))
                .count();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
