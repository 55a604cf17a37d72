package dev.tandem.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.it.TandemCluster.Node;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Workers killed with SIGKILL under load, one JVM each: a decode worker in the middle of 16 streams
 * (every stream still ends with exactly an undisturbed run's tokens), and a prefill worker with prompts
 * queued (no client sees an error). The model is paced like an accelerator so that streams and
 * prefills last long enough to be hit.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class WorkerFailureIT extends ClusterIT {
    private TandemProcess router;
    private TandemProcess prefill2;
    private TandemProcess decode1;

    @BeforeAll
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void start() {
        cluster = new TandemCluster(
                WorkerFailureIT.class,
                Map.of(
                        "worker.heartbeat-ms",
                        100,
                        "worker.registry-ttl-ms",
                        3000,
                        // 15 ms per decode step: a 120-token stream lasts about 2 s.
                        "model.emulated-decode-step-us",
                        15_000,
                        // 4 ms per prompt token: a prompt of ~40 tokens holds a prefill worker for ~160 ms.
                        "model.emulated-prefill-us-per-token",
                        4_000,
                        // The router's queue never holds a prompt back: prompts queue on the workers, where the
                        // prefill test kills one.
                        "flow-control.max-queued-prefill-ms",
                        0,
                        "flow-control.max-queued-prefill-tokens",
                        1_000_000_000));
        // prefill-1 is the seed and is never killed; decode-2 stays too, so each test has a survivor.
        List<TandemProcess> nodes = cluster.start(
                Node.prefill("prefill-1"),
                Node.prefill("prefill-2"),
                Node.decode("decode-1"),
                Node.decode("decode-2"),
                Node.router("router"));
        prefill2 = nodes.get(1);
        decode1 = nodes.get(2);
        router = nodes.get(4);
        cluster.awaitWorkers(router, 2, 2);
    }

    @Test
    void killingADecodeWorkerMidStreamLosesNoToken() throws Exception {
        List<Completion> cases = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            Completion c = Completion.seeded("Stream " + i + " goes on and on", 7000 + i, 120);
            cases.add(c);
            calls.add(cluster.http(router)
                    .postAsync("/v1/completions", c.body(true).encode()));
        }
        // Strike once decode-1 is visibly in the middle of its share of the streams.
        awaitLoad("decode-1", "active_sequences", 4);
        long killed = System.nanoTime();
        decode1.kill9();
        int movedStreams = 0;
        for (int i = 0; i < cases.size(); i++) {
            Completion.Answer a = Completion.Answer.of(calls.get(i).get(60, TimeUnit.SECONDS), true, "stream " + i);
            assertArrayEquals(cases.get(i).expectedTokens(), a.tokenIds(), "tokens of stream " + i);
            assertEquals(cases.get(i).expectedText(), a.text(), "text of stream " + i);
            if ("decode-1".equals(a.decodeWorker())) {
                movedStreams++;
            }
        }
        System.out.printf(
                "decode kill: %d of 16 streams moved off decode-1, all exact; last stream done %d ms after the kill%n",
                movedStreams, (System.nanoTime() - killed) / 1_000_000);
        assertTrue(movedStreams >= 4, "streams on the killed worker: " + movedStreams);
        cluster.awaitWorkers(router, 2, 1);
    }

    @Test
    void killingAPrefillWorkerWithQueuedPromptsIsInvisibleToClients() throws Exception {
        List<Completion> cases = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            Completion c =
                    Completion.seeded("Prompt number " + i + " waits in the prefill queue of its worker", 9000 + i, 6);
            cases.add(c);
            calls.add(cluster.http(router)
                    .postAsync("/v1/completions", c.body(i % 2 == 0).encode()));
        }
        awaitLoad("prefill-2", "queued_prefill_tokens", 100);
        long killed = System.nanoTime();
        prefill2.kill9();
        int firstOnKilled = 0;
        for (int i = 0; i < cases.size(); i++) {
            Completion.Answer a =
                    Completion.Answer.of(calls.get(i).get(60, TimeUnit.SECONDS), i % 2 == 0, "request " + i);
            assertArrayEquals(cases.get(i).expectedTokens(), a.tokenIds(), "tokens of request " + i);
            if ("prefill-2".equals(a.prefillWorker())) {
                firstOnKilled++;
            }
        }
        System.out.printf(
                "prefill kill: %d of 24 requests first sent to prefill-2, all 200 and exact; done %d ms after the kill%n",
                firstOnKilled, (System.nanoTime() - killed) / 1_000_000);
        assertTrue(firstOnKilled >= 2, "requests sent to the killed worker: " + firstOnKilled);
    }

    /** Waits until the registry (as the router sees it) shows at least {@code min} of a load field on a worker. */
    private void awaitLoad(String workerId, String field, int min) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            JsonObject w = worker(router, workerId);
            if (w != null && w.getJsonObject("load").getInteger(field) >= min) {
                return;
            }
            sleep(20);
        }
        throw new AssertionError(workerId + " never showed " + field + " >= " + min + "\n" + cluster.describe(20));
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
