package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * An upstream's Prometheus {@code /metrics} become its worker's load in the registry, and the scheduler
 * follows it: of two decode workers, the one whose vLLM reports fewer requests and less KV in use gets
 * the requests, and the choice turns when the load does. An upstream whose {@code /health} fails drains
 * its worker, which rejoins once it is healthy.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UpstreamLoadTest {
    private UpstreamCluster cluster;
    private FakeUpstream first;
    private FakeUpstream second;

    @BeforeAll
    void start() {
        cluster = new UpstreamCluster(FakeUpstream.Kind.VLLM);
        FakeUpstream prefill = cluster.fake(true);
        first = cluster.fake(false);
        second = cluster.fake(false);
        cluster.worker(prefill, "prefill-l");
        cluster.worker(first, "decode-1");
        cluster.worker(second, "decode-2");
        cluster.awaitModel();
        TestNodes.awaitWorkers(cluster.router.router(), 1, 2);
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private WorkerDescriptor registered(String id) {
        return cluster.router.router().directory().workers(WorkerRole.DECODE).stream()
                .filter(w -> w.workerId().equals(id))
                .findFirst()
                .orElse(null);
    }

    private void awaitRegistered(String id, Predicate<WorkerDescriptor> condition, String what) {
        TestNodes.awaitTrue(
                () -> {
                    WorkerDescriptor w = registered(id);
                    return w != null && condition.test(w);
                },
                id + " " + what);
    }

    private String decodeWorkerOfOneRequest() {
        HttpResponse<String> r = cluster.http.post(
                "/v1/completions",
                new JsonObject()
                        .put("model", FakeUpstream.MODEL)
                        .put("prompt", "The capital of France:")
                        .put("max_tokens", 3)
                        .encode());
        assertEquals(200, r.statusCode(), r.body());
        return r.headers().firstValue("X-Tandem-Decode-Worker").orElseThrow();
    }

    private void busy(FakeUpstream f, boolean busy) {
        f.running = busy ? 30 : 0;
        f.waiting = busy ? 12 : 0;
        f.kvUsage = busy ? 0.9 : 0.05;
    }

    @Test
    void theUpstreamsMetricsAreTheWorkersLoadAndTurnTheSchedulersChoice() {
        busy(first, true);
        busy(second, false);
        awaitRegistered("decode-1", w -> w.load().activeSequences() == 42, "to report 30 running + 12 waiting");
        WorkerDescriptor loaded = registered("decode-1");
        assertEquals(
                0.9,
                (double) loaded.load().kvBytesUsed() / loaded.load().kvBytesCapacity(),
                1e-6,
                "vllm:kv_cache_usage_perc as the share of KV used");
        awaitRegistered("decode-2", w -> w.load().activeSequences() == 0, "to report no request");
        first.received.clear();
        second.received.clear();
        for (int i = 0; i < 4; i++) {
            assertEquals("decode-2", decodeWorkerOfOneRequest());
        }
        assertEquals(0, first.received.size());
        assertEquals(4, second.received.size());

        busy(first, false);
        busy(second, true);
        awaitRegistered("decode-2", w -> w.load().activeSequences() == 42, "to report its new load");
        awaitRegistered("decode-1", w -> w.load().activeSequences() == 0, "to report no request");
        for (int i = 0; i < 4; i++) {
            assertEquals("decode-1", decodeWorkerOfOneRequest());
        }
        busy(second, false);
    }

    @Test
    void anUnhealthyUpstreamDrainsItsWorkerUntilItIsHealthyAgain() {
        busy(first, false);
        busy(second, true); // without the drain, the idle first would be chosen
        awaitRegistered("decode-2", w -> w.load().activeSequences() == 42, "to report its load");
        first.healthy = false;
        awaitRegistered("decode-1", WorkerDescriptor::draining, "to drain while its upstream is unhealthy");
        for (int i = 0; i < 3; i++) {
            assertEquals("decode-2", decodeWorkerOfOneRequest(), "a draining worker takes nothing new");
        }
        first.healthy = true;
        awaitRegistered("decode-1", w -> !w.draining(), "to rejoin once its upstream is healthy");
        assertTrue(registered("decode-1") != null);
        assertEquals("decode-1", decodeWorkerOfOneRequest());
        busy(second, false);
    }
}
