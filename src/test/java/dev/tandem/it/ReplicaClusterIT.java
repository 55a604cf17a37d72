package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.tandem.HttpTestClient;
import dev.tandem.engine.SamplingParams;
import dev.tandem.it.TandemCluster.Node;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two router replicas in front of two prefill and two decode workers, six JVMs from the shaded jar:
 * either router serves the same exact text, and a session sticks to its decode worker whichever
 * router it comes through (the affinity map is shared in Hazelcast).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplicaClusterIT extends ClusterIT {
    private static final Set<String> PREFILL = Set.of("prefill-1", "prefill-2");
    private static final Set<String> DECODE = Set.of("decode-1", "decode-2");

    private TandemProcess routerA;
    private TandemProcess routerB;

    @BeforeAll
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void start() {
        // Registry heartbeat and TTL stay at their defaults (250/3000 ms): nothing here is killed, and a
        // short TTL only risks workers lapsing from the registry when the 2 cores are busy. A request
        // timeout under the client's 30 s makes a stuck request an HTTP 504 with a message. The seed
        // policy: new sessions take turns on the decode workers, so sessions started in a row land on both
        // and their affinity is checked on each (the default policy sends each to the worker that looks
        // least busy, which for requests in a row may be the same one every time).
        cluster = new TandemCluster(
                ReplicaClusterIT.class,
                Map.of(
                        "router.request-timeout-ms",
                        20_000,
                        "router.policy",
                        "seed",
                        // The routers' queue never holds a prompt back: which worker frees first would otherwise
                        // decide where a request goes, and this test checks that both replicas spread over all.
                        "flow-control.max-queued-prefill-ms",
                        0,
                        "flow-control.max-queued-prefill-tokens",
                        1_000_000_000));
        // prefill-1 is the seed: it starts alone and is never killed.
        List<TandemProcess> nodes = cluster.start(
                Node.prefill("prefill-1"),
                Node.prefill("prefill-2"),
                Node.decode("decode-1"),
                Node.decode("decode-2"),
                Node.router("router-a"),
                Node.router("router-b"));
        routerA = nodes.get(4);
        routerB = nodes.get(5);
        cluster.awaitWorkers(routerA, 2, 2);
        cluster.awaitWorkers(routerB, 2, 2);
    }

    @Test
    void bothRoutersServeTheLocallyComputedText() throws Exception {
        List<Completion> cases = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String prompt =
                    "Replica " + i + (i % 2 == 0 ? " with a longer prompt that spans more than one KV block" : "");
            SamplingParams sampling =
                    i % 3 == 0 ? new SamplingParams(0, 1, 0, 0) : new SamplingParams(0.8, 0.95, 0, 4200 + i);
            cases.add(new Completion(prompt, sampling, 10 + i * 3));
        }
        // Every case through both routers at once, streamed on one and not on the other.
        List<CompletableFuture<HttpResponse<String>>> viaA = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> viaB = new ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            viaA.add(cluster.http(routerA)
                    .postAsync("/v1/completions", cases.get(i).body(i % 2 == 0).encode()));
            viaB.add(cluster.http(routerB)
                    .postAsync("/v1/completions", cases.get(i).body(i % 2 != 0).encode()));
        }
        Set<String> requestIds = new TreeSet<>();
        Set<String> prefillA = new TreeSet<>();
        Set<String> decodeA = new TreeSet<>();
        Set<String> prefillB = new TreeSet<>();
        Set<String> decodeB = new TreeSet<>();
        for (int i = 0; i < cases.size(); i++) {
            Completion c = cases.get(i);
            int[] expected = c.expectedTokens();
            String expectedText = c.expectedText();
            Completion.Answer a = Completion.Answer.of(viaA.get(i).get(30, TimeUnit.SECONDS), i % 2 == 0, "router A");
            Completion.Answer b = Completion.Answer.of(viaB.get(i).get(30, TimeUnit.SECONDS), i % 2 != 0, "router B");
            assertArrayEquals(expected, a.tokenIds(), "tokens of case " + i + " via router A");
            assertArrayEquals(expected, b.tokenIds(), "tokens of case " + i + " via router B");
            assertEquals(expectedText, a.text(), "text of case " + i + " via router A");
            assertEquals(a.text(), b.text(), "text of case " + i + " via router B");
            requestIds.add(a.requestId());
            requestIds.add(b.requestId());
            prefillA.add(a.prefillWorker());
            decodeA.add(a.decodeWorker());
            prefillB.add(b.prefillWorker());
            decodeB.add(b.decodeWorker());
        }
        assertNotEquals(routerA.routerId(), routerB.routerId());
        assertEquals(2 * cases.size(), requestIds.size(), "request ids are unique across the replicas: " + requestIds);
        // Both routers spread over every worker (other JVMs): the text did not come from one lucky pair.
        assertEquals(PREFILL, prefillA, "prefill workers used by router A");
        assertEquals(PREFILL, prefillB, "prefill workers used by router B");
        assertEquals(DECODE, decodeA, "decode workers used by router A");
        assertEquals(DECODE, decodeB, "decode workers used by router B");
    }

    @Test
    void aSessionKeepsItsDecodeWorkerAcrossRouters() {
        // Sessions 0-2 start on router A, 3-5 on router B. Each router sends new sessions round-robin (the
        // seed policy), so three new sessions in a row land on both decode workers.
        List<String> sessions = new ArrayList<>();
        List<String> pinned = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            sessions.add("session-" + i + "-" + UUID.randomUUID());
            pinned.add(sessionRequest(i < 3 ? routerA : routerB, sessions.get(i), i)
                    .decodeWorker());
        }
        // Then each session through the other router, and back through its first one.
        for (int i = 0; i < 6; i++) {
            TandemProcess first = i < 3 ? routerA : routerB;
            TandemProcess other = i < 3 ? routerB : routerA;
            assertEquals(
                    pinned.get(i),
                    sessionRequest(other, sessions.get(i), i).decodeWorker(),
                    "decode worker of session " + i + " through " + other.name() + " after " + first.name());
            assertEquals(
                    pinned.get(i),
                    sessionRequest(first, sessions.get(i), i).decodeWorker(),
                    "decode worker of session " + i + " back through " + first.name());
        }
        assertEquals(DECODE, new TreeSet<>(pinned.subList(0, 3)), "decode workers of the sessions started on router A");
        assertEquals(DECODE, new TreeSet<>(pinned.subList(3, 6)), "decode workers of the sessions started on router B");
    }

    /** Odd sessions are named by the X-Session-Id header, even ones by the OpenAI 'user' field. */
    private Completion.Answer sessionRequest(TandemProcess router, String session, int index) {
        HttpTestClient http = cluster.http(router);
        JsonObject body = new JsonObject()
                .put("prompt", "Hello again")
                .put("max_tokens", 4)
                .put("temperature", 0);
        HttpRequest.Builder request = http.request("/v1/completions").header("Content-Type", "application/json");
        if (index % 2 == 1) {
            request.header("X-Session-Id", session);
        } else {
            body.put("user", session);
        }
        HttpResponse<String> response = http.send(
                request.POST(HttpRequest.BodyPublishers.ofString(body.encode())).build());
        return Completion.Answer.of(response, false, router.name());
    }
}
