package dev.tandem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.TandemConfig;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A tenant's quota holds for the cluster, not per replica: three router replicas (separate Hazelcast
 * members) in front of one worker node, a tenant limited to 600 requests per minute sending 1,200 — spread
 * evenly at random over the three, or mostly to one. Exactly 600 are served within the minute either way;
 * every refusal is a 429 {@code rate_limit_exceeded} with {@code Retry-After} and OpenAI's rate-limit
 * headers.
 */
class QuotaAcrossReplicasTest {
    private static final int LIMIT = 600;
    private static final int SENT = 1_200;

    @Test
    void threeReplicasTogetherAdmitTheQuotaNotThreeTimesIt() throws Exception {
        TandemConfig base = TestNodes.config();
        TandemConfig config = base.withFlowControl(TandemConfig.fromJson(new JsonObject()
                        .put(
                                "flow-control",
                                new JsonObject()
                                        .put(
                                                "tenants",
                                                new JsonObject()
                                                        .put("even", new JsonObject().put("requests-per-minute", LIMIT))
                                                        .put(
                                                                "skewed",
                                                                new JsonObject().put("requests-per-minute", LIMIT)))))
                .flowControl());
        List<TandemNode> nodes = new ArrayList<>();
        try {
            nodes.add(TandemNode.start(config, new TandemNode.Plan(false, List.of("prefill-q"), List.of("decode-q"))));
            for (int r = 0; r < 3; r++) {
                nodes.add(TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of())));
            }
            List<HttpTestClient> replicas = new ArrayList<>();
            for (TandemNode router : nodes.subList(1, 4)) {
                TestNodes.awaitWorkers(router.router(), 1, 1);
                replicas.add(new HttpTestClient(router.router().httpPort()));
            }
            burst(replicas, "even", new double[] {1 / 3.0, 2 / 3.0});
            burst(replicas, "skewed", new double[] {0.8, 0.9});
        } finally {
            for (int i = nodes.size() - 1; i >= 0; i--) {
                nodes.get(i).close().await();
            }
        }
    }

    /**
     * {@link #SENT} requests of {@code tenant}, each to replica 0, 1 or 2 as a uniform draw falls below
     * {@code split[0]}, {@code split[1]} or neither.
     */
    private static void burst(List<HttpTestClient> replicas, String tenant, double[] split) throws Exception {
        awayFromTheMinutesEnd();
        Semaphore window = new Semaphore(48);
        Random random = new Random(3);
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        int[] sentTo = new int[SENT];
        for (int i = 0; i < SENT; i++) {
            double u = random.nextDouble();
            sentTo[i] = u < split[0] ? 0 : u < split[1] ? 1 : 2;
            HttpRequest request = replicas.get(sentTo[i])
                    .request("/v1/completions")
                    .header("Content-Type", "application/json")
                    .header("X-Tenant-Id", tenant)
                    .POST(HttpRequest.BodyPublishers.ofString(new JsonObject()
                            .put("prompt", "q" + i)
                            .put("max_tokens", 1)
                            .encode()))
                    .build();
            window.acquire();
            calls.add(replicas.get(sentTo[i]).sendAsync(request).whenComplete((r, e) -> window.release()));
        }
        int admitted = 0;
        int[] admittedBy = new int[3];
        int[] refusedBy = new int[3];
        for (int i = 0; i < SENT; i++) {
            HttpResponse<String> r = calls.get(i).get(60, TimeUnit.SECONDS);
            if (r.statusCode() == 200) {
                admitted++;
                admittedBy[sentTo[i]]++;
                assertEquals(
                        Integer.toString(LIMIT),
                        r.headers().firstValue("x-ratelimit-limit-requests").orElse(null),
                        r.headers().map() + " " + r.body());
                continue;
            }
            refusedBy[sentTo[i]]++;
            assertEquals(429, r.statusCode(), r.body());
            assertEquals(
                    "rate_limit_exceeded",
                    new JsonObject(r.body()).getJsonObject("error").getString("code"));
            long retryAfter =
                    Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
            assertTrue(retryAfter >= 1 && retryAfter <= 60, "Retry-After " + retryAfter);
            assertEquals(
                    "0",
                    r.headers().firstValue("x-ratelimit-remaining-requests").orElse(null));
            assertTrue(r.headers()
                    .firstValue("x-ratelimit-reset-requests")
                    .orElseThrow()
                    .matches("\\d+s"));
        }
        System.out.printf(
                "%s: quota %d/min, %d sent over 3 replicas: %d admitted (by replica %d/%d/%d), refused %d/%d/%d%n",
                tenant,
                LIMIT,
                SENT,
                admitted,
                admittedBy[0],
                admittedBy[1],
                admittedBy[2],
                refusedBy[0],
                refusedBy[1],
                refusedBy[2]);
        assertEquals(LIMIT, admitted, "the cluster's sum, not each replica's");
        for (int r = 0; r < 3; r++) {
            assertTrue(admittedBy[r] > 0 && refusedBy[r] > 0, "every replica admitted and refused some");
        }
    }

    /** Quotas count clock minutes: a burst stays inside one (it takes a few seconds). */
    private static void awayFromTheMinutesEnd() throws InterruptedException {
        long intoMinute = System.currentTimeMillis() % 60_000;
        if (intoMinute > 40_000) {
            Thread.sleep(60_000 - intoMinute + 500);
        }
    }
}
