package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.UpstreamSettings;
import org.junit.jupiter.api.Test;

/**
 * A discovery call the upstream reads and never answers (a server still starting, a call lost) fails by
 * discovery's own deadline and is asked again; the worker starts long before {@code upstream-timeout-ms},
 * which is sized for a long prompt's prefill, not for {@code /v1/models}.
 */
class UpstreamDiscoveryRetryTest {

    @Test
    void anUnansweredModelsCallIsRetriedByDiscoverysDeadlineNotTheServingOne() {
        try (UpstreamCluster cluster = new UpstreamCluster(FakeUpstream.Kind.VLLM)) {
            FakeUpstream fake = cluster.fake(true);
            fake.unansweredModelCalls.set(1);
            long servingTimeoutMs = 300_000;
            UpstreamSettings upstream =
                    new UpstreamSettings(fake.url(), UpstreamSettings.VLLM, servingTimeoutMs, 50, 120_000, 0, "", 8998);
            long start = System.nanoTime();
            cluster.worker(upstream, "prefill-retried", true);
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertEquals(0, fake.unansweredModelCalls.get(), "the unanswered call was made");
            long bound = 3 * UpstreamDiscovery.CALL_TIMEOUT_MS + 5_000;
            assertTrue(tookMs < bound, "started in " + tookMs + " ms, bound " + bound + " ms");
            TestNodes.awaitWorkers(cluster.router.router(), 1, 0);
        }
    }
}
