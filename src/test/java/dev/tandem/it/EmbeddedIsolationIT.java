package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two {@code tandem all} on one host, default configuration but for their ports (conf/tandem.yaml:
 * one cluster name, one base port): each is a cluster of one. Neither sees the other's workers or
 * router, and each serves its own requests — where before they silently formed one cluster and paired
 * each other's workers.
 */
class EmbeddedIsolationIT {
    private final List<TandemProcess> processes = new ArrayList<>();

    @AfterEach
    void stop() {
        processes.forEach(TandemProcess::stop);
    }

    private TandemProcess start(String name) {
        Path dir = Path.of(
                System.getProperty("tandem.it.logs", "target/it-logs"),
                getClass().getSimpleName());
        // Only ports differ from the defaults: HTTP and the TCP bridge on any free port.
        TandemProcess p = TandemProcess.launch(name, "all", List.of("--http-port", "0", "--bridge-port", "0"), dir);
        processes.add(p);
        return p;
    }

    /** The array under {@code field} of a GET's JSON answer. */
    private static JsonArray getArray(HttpTestClient http, String path, String field) {
        HttpResponse<String> r = http.send(http.request(path).GET().build());
        assertEquals(200, r.statusCode(), r.body());
        return new JsonObject(r.body()).getJsonArray(field);
    }

    @Test
    void twoEmbeddedNodesOnOneHostNeverMeet() {
        long deadline = System.nanoTime() + TandemProcess.START_TIMEOUT.toNanos();
        TandemProcess a = start("embedded-a");
        TandemProcess b = start("embedded-b");
        a.awaitReady(deadline);
        b.awaitReady(deadline);

        Set<String> nodes = new HashSet<>();
        for (TandemProcess p : List.of(a, b)) {
            HttpTestClient http = new HttpTestClient(p.httpPort());
            // Give a would-be neighbour time to show up: Hazelcast joins within a few seconds.
            sleep(3000);
            JsonArray workers = getArray(http, "/admin/workers", "workers");
            assertEquals(4, workers.size(), p.name() + " sees only its own 2 prefill + 2 decode workers: " + workers);
            Set<String> ownNode = new HashSet<>();
            for (int i = 0; i < workers.size(); i++) {
                ownNode.add(workers.getJsonObject(i).getString("node_id"));
            }
            assertEquals(1, ownNode.size(), "all of " + p.name() + "'s workers are on its own node: " + ownNode);
            nodes.addAll(ownNode);
            assertEquals(1, getArray(http, "/admin/routers", "routers").size(), p.name() + " knows one router, itself");

            HttpResponse<String> r = http.post(
                    "/v1/completions",
                    new JsonObject()
                            .put("prompt", "Once upon a time")
                            .put("max_tokens", 5)
                            .encode());
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(p.logTail(200).contains("Embedded: a cluster of one"), p.logTail(40));
        }
        assertEquals(2, nodes.size(), "two nodes, two clusters");
        assertNotEquals(a.clusterPort(), -1);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
