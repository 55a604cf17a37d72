package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestTls;
import dev.tandem.it.TandemCluster.Node;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33's intruder, in separate JVMs: a cluster whose members hold certificates of the cluster CA, and a
 * process of the project's own jar started as {@code decode --join} without one. Hazelcast lets it in (the
 * open-source edition authenticates nobody), but the router ignores its registry entry and the event bus
 * refuses it, so it is given no prompt; the same command with the certificate serves.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterTlsIT extends ClusterIT {
    private static final Map<String, String> CLUSTER_TLS = Map.of(
            "TANDEM_CLUSTER_TLS_CERT", TestTls.pem("node"),
            "TANDEM_CLUSTER_TLS_KEY", TestTls.pem("node-key"),
            "TANDEM_CLUSTER_TLS_CA", TestTls.pem("cluster-ca"));

    private TandemProcess router;
    private TandemProcess intruder;

    @BeforeAll
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void start() {
        cluster = new TandemCluster(
                ClusterTlsIT.class, Map.of("worker.heartbeat-ms", 100, "worker.registry-ttl-ms", 3000));
        cluster.start(Node.prefill("prefill-1").withEnv(CLUSTER_TLS));
        // The intruder: the project's jar as `decode --join`, without the certificate.
        var started = cluster.start(Node.router("router").withEnv(CLUSTER_TLS), Node.decode("decode-intruder"));
        router = started.get(0);
        intruder = started.get(1);
        cluster.awaitWorkers(router, 1, 0);
    }

    private HttpResponse<String> complete(String prompt) {
        return cluster.http(router)
                .post(
                        "/v1/completions",
                        new JsonObject()
                                .put("prompt", prompt)
                                .put("max_tokens", 4)
                                .encode());
    }

    @Test
    void aNodeWithoutTheClusterCertificateGetsNoPromptAndOneWithItServes() throws Exception {
        // It joined Hazelcast and announced itself; the router says why it is not listed.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.readString(router.logFile())
                        .contains("registry entry 'decode-intruder' ignored: it is not signed")
                && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertTrue(
                Files.readString(router.logFile())
                        .contains("registry entry 'decode-intruder' ignored: it is not signed"),
                "the router refuses the intruder's entry\n" + cluster.describe(20));
        Thread.sleep(500); // five of its heartbeats
        assertEquals(null, worker(router, "decode-intruder"), "the intruder must never be listed");
        HttpResponse<String> refused = complete("Nobody may decode this");
        assertNotEquals(200, refused.statusCode(), "with only the intruder as decode worker there is no one to decode");
        assertTrue(intruder.isAlive(), "the intruder runs on: it is the guard that keeps it out, not a crash");
        assertFalse(
                Files.readString(intruder.logFile()).contains("Nobody may decode this"),
                "no prompt reached the intruder");

        cluster.start(Node.decode("decode-1").withEnv(CLUSTER_TLS));
        cluster.awaitWorkers(router, 1, 1);
        for (int i = 0; i < 4; i++) {
            HttpResponse<String> served = complete("Served over mutual TLS " + i);
            assertEquals(200, served.statusCode(), served.body());
            // Sampled (temperature 1): the model may pick its end-of-text token before the fourth token.
            int generated = new JsonObject(served.body()).getJsonObject("usage").getInteger("completion_tokens");
            assertTrue(generated >= 1 && generated <= 4, served.body());
        }
        assertEquals(null, worker(router, "decode-intruder"));
    }
}
