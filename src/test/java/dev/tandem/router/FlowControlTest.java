package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.cluster.QuotaDecision;
import dev.tandem.cluster.TenantQuotas;
import dev.tandem.config.FlowControlSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TenantSettings;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Flow control in the router core, on a hand-driven loop: one prefill worker that takes one prompt at a time
 * (no rate measured yet, one batch slot), so the second request finds the pool saturated and waits.
 */
class FlowControlTest {
    private static final TenantSettings LOW = new TenantSettings(0, 0, 0);
    private static final TenantSettings HIGH = new TenantSettings(5, 0, 0);

    private static FlowControlSettings flow(JsonObject json) {
        return TandemConfig.fromJson(new JsonObject().put("flow-control", json)).flowControl();
    }

    private static CoreHarness harness(FlowControlSettings flow, TenantQuotas quotas) {
        CoreHarness h = new CoreHarness(1, 1, TandemConfig.defaults().router(), flow, quotas);
        h.prefillRate("p1", 0, 1);
        return h;
    }

    private static RequestClass tenant(String name, TenantSettings s) {
        return new RequestClass(name, s, 0, 0);
    }

    @Test
    void aSaturatedPoolQueuesAndTheQueueIsServedByPriority() {
        CoreHarness h = harness(flow(new JsonObject()), TenantQuotas.UNLIMITED);
        CoreHarness.Submitted first = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        CoreHarness.Submitted low = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        CoreHarness.Submitted high = h.submit(CoreHarness.request(2, tenant("b", HIGH)));
        assertEquals(1, h.workers.prefills.size(), "one prompt on the only prefill worker; the others wait");
        assertEquals(2, h.router.queued());
        assertEquals(
                1.0,
                h.registry.get("tandem.flow.queued").tag("tenant", "a").gauge().value());
        // Its prefill done, the worker has room: the high band goes first though it came last.
        h.decoding(1, 65);
        assertEquals(2, h.workers.prefills.size());
        assertEquals(high.handle(), handleOf(h, 2));
        h.decoding(2, 65);
        assertEquals(low.handle(), handleOf(h, 3));
        assertEquals(0, h.router.queued());
        h.decoding(3, 65);
        for (CoreHarness.Submitted s : List.of(first, low, high)) {
            h.finish("d1", s.id(), 1, "length", 66);
        }
        assertEquals("finish:length", low.sink().outcome());
        assertEquals(
                1,
                h.registry
                        .get("tandem.flow.queue.wait")
                        .tag("tenant", "b")
                        .timer()
                        .count());
        assertEquals("", h.leftovers());
    }

    @Test
    void aRequestLeavesTheQueueAtItsDeadlineWith429AndRetryAfterNeverDispatched() {
        CoreHarness h = harness(flow(new JsonObject().put("queue-timeout-ms", 5_000)), TenantQuotas.UNLIMITED);
        CoreHarness.Submitted running = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        CoreHarness.Submitted ownDeadline = h.submit(CoreHarness.request(2, new RequestClass("a", LOW, 300, 0)));
        CoreHarness.Submitted configured = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        h.loop.advance(299);
        assertEquals("open", ownDeadline.sink().outcome());
        h.loop.advance(1);
        assertEquals("error:429 queue_timeout", ownDeadline.sink().outcome(), "its own deadline, 300 ms");
        assertEquals("1", ownDeadline.sink().error.headers().get("Retry-After"));
        h.loop.advance(4_700);
        assertEquals("error:429 queue_timeout", configured.sink().outcome(), "the configured 5 s");
        assertEquals(1, h.workers.prefills.size(), "neither was ever sent to a worker");
        assertEquals(
                2.0,
                h.registry
                        .get("tandem.flow.rejected")
                        .tag("reason", "queue_timeout")
                        .counter()
                        .count());
        h.decoding(1, 65);
        h.finish("d1", running.id(), 1, "length", 66);
        assertEquals("", h.leftovers());
    }

    @Test
    void aCancelledQueuedRequestLeavesTheQueueAtOnce() {
        CoreHarness h = harness(flow(new JsonObject()), TenantQuotas.UNLIMITED);
        CoreHarness.Submitted running = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        CoreHarness.Submitted waiting = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        assertEquals(1, h.router.queued());
        waiting.handle().cancel();
        h.loop.runPending();
        assertEquals(0, h.router.queued(), "out of the queue at once, not at its deadline");
        assertEquals(1, h.router.admitted(), "its place is given back");
        assertEquals(
                0.0,
                h.registry.get("tandem.flow.queued").tag("tenant", "a").gauge().value());
        h.decoding(1, 65);
        h.finish("d1", running.id(), 1, "length", 66);
        assertEquals(1, h.workers.prefills.size(), "the cancelled request never reached a worker");
        assertEquals("", h.leftovers());
    }

    @Test
    void aFullTenantQueueRefusesWithRetryAfterAndOtherTenantsStillQueue() {
        CoreHarness h = harness(flow(new JsonObject().put("max-queued-per-tenant", 1)), TenantQuotas.UNLIMITED);
        CoreHarness.Submitted running = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        CoreHarness.Submitted queued = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        CoreHarness.Submitted refused = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        CoreHarness.Submitted other = h.submit(CoreHarness.request(2, tenant("b", LOW)));
        assertEquals("error:429 queue_full", refused.sink().outcome());
        assertEquals("1", refused.sink().error.headers().get("Retry-After"));
        assertEquals("open", other.sink().outcome(), "b's own queue has room");
        h.decoding(1, 65);
        h.decoding(2, 65);
        h.decoding(3, 65);
        for (CoreHarness.Submitted s : List.of(running, queued, other)) {
            h.finish("d1", s.id(), 1, "length", 66);
            assertEquals("finish:length", s.sink().outcome());
        }
        assertEquals("", h.leftovers());
    }

    @Test
    void waitingRequestsHoldNoPlaceOfMaxInFlightSoAHeavyBacklogLeavesRoomForOthers() {
        CoreHarness h = new CoreHarness(
                1,
                1,
                TandemConfig.fromJson(new JsonObject().put("router", new JsonObject().put("max-in-flight", 2)))
                        .router(),
                flow(new JsonObject()),
                TenantQuotas.UNLIMITED);
        h.prefillRate("p1", 0, 1);
        CoreHarness.Submitted running = h.submit(CoreHarness.request(2, tenant("heavy", LOW)));
        List<CoreHarness.Submitted> backlog = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            backlog.add(h.submit(CoreHarness.request(2, tenant("heavy", LOW))));
        }
        CoreHarness.Submitted light = h.submit(CoreHarness.request(2, tenant("light", LOW)));
        assertEquals("open", light.sink().outcome(), "not refused 'overloaded' behind heavy's five waiting");
        assertEquals(6, h.router.queued());
        h.decoding(1, 65);
        assertEquals(light.handle(), handleOf(h, 2), "the lighter backlog goes first");
        h.finish("d1", running.id(), 1, "length", 66);
        h.decoding(2, 65);
        h.finish("d1", light.id(), 1, "length", 66);
        for (int n = 3; n <= 7; n++) {
            h.decoding(n, 65);
            h.finish("d1", h.workers.prefill(n).message.requestId(), 1, "length", 66);
        }
        for (CoreHarness.Submitted s : backlog) {
            assertEquals("finish:length", s.sink().outcome());
        }
        assertEquals("", h.leftovers());
    }

    /** A quota store that admits the first {@code limit} requests of a minute, then refuses; or fails. */
    private static final class CountingQuotas implements TenantQuotas {
        final int limit;
        final boolean unreachable;
        int taken;
        final List<Long> givenBack = new ArrayList<>();

        CountingQuotas(int limit, boolean unreachable) {
            this.limit = limit;
            this.unreachable = unreachable;
        }

        @Override
        public Future<QuotaDecision> take(String tenant, long rpm, long tpm, long tokens) {
            if (unreachable) {
                return Future.failedFuture("partitioned");
            }
            boolean ok = taken < limit;
            taken += ok ? 1 : 0;
            return Future.succeededFuture(new QuotaDecision(ok, 7, 12_500, rpm, taken, tpm, 0));
        }

        @Override
        public void giveBack(String tenant, long window, long tokens) {
            givenBack.add(tokens);
        }
    }

    @Test
    void overItsQuotaATenantGets429WithOpenAisHeadersAndUnusedTokensGoBack() {
        CountingQuotas quotas = new CountingQuotas(1, false);
        CoreHarness h = harness(flow(new JsonObject()), quotas);
        TenantSettings capped = new TenantSettings(0, 1, 1_000);
        CoreHarness.Submitted ok = h.submit(CoreHarness.request(5, tenant("c", capped)));
        CoreHarness.Submitted over = h.submit(CoreHarness.request(5, tenant("c", capped)));
        assertEquals("error:429 rate_limit_exceeded", over.sink().outcome());
        Map<String, String> headers = over.sink().error.headers();
        assertEquals("13", headers.get("Retry-After"), "seconds until the minute ends, rounded up");
        assertEquals("1", headers.get("x-ratelimit-limit-requests"));
        assertEquals("0", headers.get("x-ratelimit-remaining-requests"));
        assertEquals("13s", headers.get("x-ratelimit-reset-requests"));
        assertEquals("1000", headers.get("x-ratelimit-limit-tokens"));
        assertEquals("1", ok.sink().rateLimits.get("x-ratelimit-limit-requests"), "admitted ones hear them too");
        h.decoding(1, 65);
        h.finish("d1", ok.id(), 1, "stop", 66);
        // It took prompt (3) + max_tokens (5) tokens and used prompt + 2 generated: 3 go back.
        assertEquals(List.of(3L), quotas.givenBack);
        assertEquals("", h.leftovers());
    }

    @Test
    void unreachableQuotaCountersAdmitOrRefuseAsConfigured() {
        TenantSettings capped = new TenantSettings(0, 10, 0);
        CoreHarness open = harness(flow(new JsonObject()), new CountingQuotas(0, true));
        assertEquals(
                "open",
                open.submit(CoreHarness.request(2, tenant("c", capped))).sink().outcome());
        assertEquals(1, open.workers.prefills.size(), "fail open: served");
        CoreHarness closed =
                harness(flow(new JsonObject().put("quota-partition", "closed")), new CountingQuotas(0, true));
        CoreHarness.Submitted refused = closed.submit(CoreHarness.request(2, tenant("c", capped)));
        assertEquals("error:503 quota_unavailable", refused.sink().outcome());
        assertEquals("1", refused.sink().error.headers().get("Retry-After"));
        assertEquals("", closed.leftovers());
    }

    @Test
    void aTtftTargetNoWorkerCanMeetIsRefusedEarlyAndOneItCanIsServed() {
        CoreHarness h = harness(flow(new JsonObject()), TenantQuotas.UNLIMITED);
        // 1,000 prompt tokens per second and 3 prompt tokens: 3 ms predicted.
        h.prefillRate("p1", 1_000, 4);
        CoreHarness.Submitted tight = h.submit(CoreHarness.request(2, new RequestClass("a", LOW, 0, 2)));
        assertEquals("error:429 slo_unattainable", tight.sink().outcome());
        assertTrue(
                tight.sink().error.getMessage().contains("3 ms"),
                tight.sink().error.getMessage());
        CoreHarness.Submitted loose = h.submit(CoreHarness.request(2, new RequestClass("a", LOW, 0, 50)));
        assertEquals(1, h.workers.prefills.size(), "a 50 ms target is met: it goes to the worker");
        h.decoding(1, 65);
        h.finish("d1", loose.id(), 1, "length", 66);
        assertEquals("finish:length", loose.sink().outcome());
        assertEquals("", h.leftovers());
    }

    @Test
    void aQueuedRequestWhoseTargetPassesLeavesAsUnattainable() {
        CoreHarness h = harness(flow(new JsonObject()), TenantQuotas.UNLIMITED);
        CoreHarness.Submitted running = h.submit(CoreHarness.request(2, tenant("a", LOW)));
        CoreHarness.Submitted waiting = h.submit(CoreHarness.request(2, new RequestClass("a", LOW, 0, 200)));
        h.loop.advance(200);
        assertEquals("error:429 slo_unattainable", waiting.sink().outcome());
        h.decoding(1, 65);
        h.finish("d1", running.id(), 1, "length", 66);
        assertEquals("", h.leftovers());
    }

    private static RequestRouter.Handle handleOf(CoreHarness h, int prefill) {
        long id = h.workers.prefill(prefill).message.requestId();
        return h.submitted.stream()
                .filter(s -> s.id() == id)
                .findFirst()
                .orElseThrow()
                .handle();
    }
}
