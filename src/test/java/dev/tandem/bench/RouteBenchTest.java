package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.bench.trace.IdealHitRate;
import dev.tandem.bench.trace.TraceReader;
import dev.tandem.engine.sim.SimEngine;
import dev.tandem.engine.sim.SimProfiles;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole route benchmark on a small hand-made Mooncake trace — real loopback clusters of sim
 * workers, the HTTP API, streaming — checked for correctness, not speed: every request answered, the
 * summary's shape, hit rates the caches can explain, two router replicas sharing one cluster.
 */
class RouteBenchTest {

    /** Three conversations of three turns, each turn extending the last by one 512-token block. */
    private static Path trace(Path dir) throws Exception {
        StringBuilder sb = new StringBuilder();
        int t = 0;
        for (int turn = 1; turn <= 3; turn++) {
            for (int c = 0; c < 3; c++) {
                StringBuilder ids = new StringBuilder("0");
                for (int b = 1; b <= turn; b++) {
                    ids.append(',').append(c * 10 + b);
                }
                sb.append("{\"timestamp\": ")
                        .append(t)
                        .append(", \"input_length\": ")
                        .append(512 * turn + 300)
                        .append(", \"output_length\": 6, \"hash_ids\": [")
                        .append(ids)
                        .append("]}\n");
                t += 400; // time for the caches' events to reach the router's index
            }
        }
        Path file = dir.resolve("conversations.jsonl");
        Files.writeString(file, sb.toString());
        return file;
    }

    private static RouteBench.Options options(Path trace, Path out, int routers, List<String> policies) {
        return options(trace, out, routers, policies, RouteBench.Options.DIRECT);
    }

    private static RouteBench.Options options(Path trace, Path out, int routers, List<String> policies, String via) {
        return new RouteBench.Options(
                trace, 2, 2, routers, policies, 1, 0, SimProfiles.DEFAULT, out, 16, 0, 256, via, List.of(), true, 0);
    }

    @Test
    void replaysATraceOncePerPolicyAndReportsWhatTheCachesDid(@TempDir Path dir) throws Exception {
        Path trace = trace(dir);
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        JsonObject summary = RouteBench.run(
                options(trace, dir.resolve("out"), 1, List.of("default", "round-robin")),
                new PrintStream(console, true, StandardCharsets.UTF_8));

        BenchReportTest.assertSummaryShape(summary, Set.of("default", "round-robin"));
        assertEquals(summary, new JsonObject(Files.readString(dir.resolve("out/summary.json"))));
        assertEquals(9, summary.getInteger("requests"));
        long fingerprint = new SimEngine(SimProfiles.named(SimProfiles.DEFAULT), 1, 16)
                .info()
                .fingerprint();
        double ideal = IdealHitRate.of(TraceReader.read(trace, 0), RouteBench.TOKENS, fingerprint, 16, 0)
                .hitRate();
        assertEquals(ideal, summary.getDouble("ideal_hit_rate"), 1e-12);
        JsonObject byDefault = summary.getJsonObject("policies").getJsonObject("default");
        JsonObject byRoundRobin = summary.getJsonObject("policies").getJsonObject("round-robin");
        for (JsonObject p : List.of(byDefault, byRoundRobin)) {
            assertEquals(0, p.getInteger("errors"), p.encode());
            assertTrue(p.getDouble("hit_rate") <= ideal + 1e-9, "no policy beats one shared infinite cache");
            assertTrue(p.getDouble("ttft_p50_ms") > 0 && p.getDouble("throughput_tokens_per_s") > 0, p.encode());
            assertTrue(p.getLong("kv_bytes_moved") > 0, "prefill workers shipped KV");
        }
        // Each later turn's prefix was computed before: the cache-aware default finds it.
        assertTrue(byDefault.getDouble("hit_rate") >= 0.5 * ideal, byDefault.encode() + " ideal " + ideal);
        List<String> csv = Files.readAllLines(dir.resolve("out/results.csv"));
        assertEquals(1 + 2 * 9, csv.size());
        assertTrue(console.toString(StandardCharsets.UTF_8).contains("round-robin"));
    }

    @Test
    void requestsSpreadOverRouterReplicasOfOneCluster(@TempDir Path dir) throws Exception {
        JsonObject summary = RouteBench.run(
                options(trace(dir), dir.resolve("out"), 2, List.of("default")),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        JsonObject p = summary.getJsonObject("policies").getJsonObject("default");
        assertEquals(0, p.getInteger("errors"), p.encode());
        // Both replicas learn every worker's cache from the shared events: hits across replicas.
        assertTrue(p.getDouble("hit_rate") > 0, p.encode());
    }

    @Test
    void viaUpstreamTheRoutersFindTheEnginesCachesFromTheirKvEvents(@TempDir Path dir) throws Exception {
        Path trace = trace(dir);
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        JsonObject summary = RouteBench.run(
                options(trace, dir.resolve("out"), 1, List.of("default"), RouteBench.Options.UPSTREAM),
                new PrintStream(console, true, StandardCharsets.UTF_8));
        BenchReportTest.assertSummaryShape(summary, Set.of("default"));
        JsonObject p = summary.getJsonObject("policies").getJsonObject("default");
        assertEquals(0, p.getInteger("errors"), p.encode());
        double ideal = summary.getDouble("ideal_hit_rate");
        // The cached tokens are the sim vLLM instances' own count; only their events tell the router where.
        assertTrue(p.getDouble("hit_rate") >= 0.5 * ideal, p.encode() + " ideal " + ideal);
        assertTrue(p.getDouble("hit_rate") <= ideal + 1e-9, p.encode());
        assertTrue(console.toString(StandardCharsets.UTF_8).contains("sim vLLM instance"));
    }
}
