package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.RouterSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.protocol.WorkerFailure;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The request core without a cluster, table-driven over event sequences: what workers answer, when,
 * and in which order — and what the client sees. Every row ends with nothing held: no load, no
 * admission, no request entry, no timer.
 */
class RequestLifecycleTest {

    /** One event sequence: its workers (p1.., d1..), router settings, and the script that plays and checks it. */
    record Row(
            String name,
            int prefill,
            int decode,
            UnaryOperator<RouterSettings> settings,
            Consumer<CoreHarness> script) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static Row row(String name, int prefill, int decode, Consumer<CoreHarness> script) {
        return new Row(name, prefill, decode, s -> s, script);
    }

    private static int[] range(int from, int to) {
        return IntStream.rangeClosed(from, to).toArray();
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Runs prefill {@code n} to its first token and has its decode worker accept the request. */
    private static String decoding(CoreHarness h, int n, int firstToken) {
        h.workers.prefillDone(n, firstToken);
        h.loop.runPending();
        h.workers.decodeStart(h.workers.decodeStarts.size()).answer.complete();
        return h.workers.prefill(n).message.decodeWorkerId();
    }

    static Stream<Row> rows() {
        return Stream.of(
                row("undisturbed: first token from prefill, the rest from decode", 2, 2, h -> {
                    var r = h.submit(5);
                    String d = decoding(h, 1, 65);
                    h.tokens(d, r.id(), 1, 66, 67);
                    h.finish(d, r.id(), 3, "length", 68, 69);
                    assertEquals("finish:length", r.sink().outcome());
                    assertArrayEquals(range(65, 69), r.sink().tokenArray());
                    assertEquals(1, h.outcomes("ok"));
                }),

                // ---- retry before the first token: the client sees nothing of it ----
                row("prefill worker gone: retried on the other one", 2, 2, h -> {
                    var r = h.submit(5);
                    h.workers.prefill(1).fail(WorkerFailure.GONE);
                    var second = h.workers.prefill(2);
                    assertNotEquals(h.workers.prefill(1).worker, second.worker, "the failed prefill worker is avoided");
                    assertEquals(2, second.message.attempt());
                    assertArrayEquals(r.prompt(), second.message.promptTokens(), "nothing was sent: the prompt alone");
                    assertEquals(
                            List.of("moved:1"),
                            h.workers.cancelsTo(h.workers.prefill(1).message.decodeWorkerId()));
                    String d = decoding(h, 2, 65);
                    h.finish(d, r.id(), 1, "length", 66, 67, 68, 69);
                    assertArrayEquals(range(65, 69), r.sink().tokenArray());
                    assertEquals(
                            h.workers.prefill(1).worker,
                            r.sink().acceptedPrefill,
                            "accepted once, with the first pair");
                }),
                row("prefill worker silent (timeout): avoided", 2, 1, h -> {
                    var r = h.submit(3);
                    h.workers.prefill(1).timeOut();
                    assertEquals("p2", h.workers.prefill(2).worker);
                    String d = decoding(h, 2, 65);
                    h.finish(d, r.id(), 1, "length", 66, 67);
                    assertEquals("finish:length", r.sink().outcome());
                }),
                row("decode worker full: the other decode worker, the same prefill worker", 1, 2, h -> {
                    var r = h.submit(3);
                    String full = h.workers.prefill(1).message.decodeWorkerId();
                    h.workers.prefill(1).fail(WorkerFailure.OVER_CAPACITY);
                    assertEquals("p1", h.workers.prefill(2).worker, "the prefill worker was not at fault");
                    assertNotEquals(full, h.workers.prefill(2).message.decodeWorkerId());
                    String d = decoding(h, 2, 65);
                    h.finish(d, r.id(), 1, "length", 66, 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),
                row("every worker turned it away for lack of room: 429", 1, 1, h -> {
                    var r = h.submit(3);
                    h.workers.prefill(1).fail(WorkerFailure.BUSY);
                    assertEquals("error:429 workers_at_capacity", r.sink().outcome());
                    assertEquals(1, h.outcomes("rejected"));
                }),
                row("a bad request is not retried: 400, and the workers are told", 2, 2, h -> {
                    var r = h.submit(3);
                    h.workers.prefill(1).fail(WorkerFailure.BAD_REQUEST);
                    assertEquals("error:400 invalid_request", r.sink().outcome());
                    assertEquals(1, h.workers.prefills.size());
                    assertEquals(List.of("invalid_request"), h.workers.cancelsTo("p1"));
                }),
                row("gives up after four attempts: 502", 5, 5, h -> {
                    var r = h.submit(3);
                    for (int n = 1; n <= RetryPolicy.MAX_ATTEMPTS; n++) {
                        h.workers.prefill(n).fail(WorkerFailure.KV_TRANSFER_FAILED);
                    }
                    assertEquals(RetryPolicy.MAX_ATTEMPTS, h.workers.prefills.size());
                    assertEquals("error:502 worker_failed", r.sink().outcome());
                }),

                // ---- failover mid-stream: re-prefill prompt + sent tokens, the stream goes on exactly ----
                row("decode worker dies mid-stream", 2, 2, h -> {
                    var r = h.submit(6);
                    String d = decoding(h, 1, 65);
                    h.tokens(d, r.id(), 1, 66, 67);
                    h.workerGone(d);
                    var resumed = h.workers.prefill(2);
                    assertArrayEquals(concat(r.prompt(), range(65, 67)), resumed.message.promptTokens());
                    assertNotEquals(d, resumed.message.decodeWorkerId());
                    assertEquals(List.of("moved:1"), h.workers.cancelsTo(d));
                    String d2 = decoding(h, 2, 68);
                    assertEquals(3, h.workers.decodeStart(2).message.maxNewTokens(), "what is left of max_tokens");
                    h.finish(d2, r.id(), 1, "length", 69, 70);
                    assertArrayEquals(range(65, 70), r.sink().tokenArray(), "no duplicate, no gap");
                    assertEquals(1, h.outcomes("failed_over"));
                }),
                row("decode step fails on the worker: moved", 2, 2, h -> {
                    var r = h.submit(4);
                    String d = decoding(h, 1, 65);
                    h.tokens(d, r.id(), 1, 66);
                    h.decodeError(d, r.id(), 2, "decode step failed");
                    String d2 = decoding(h, 2, 67);
                    assertNotEquals(d, d2);
                    h.finish(d2, r.id(), 1, "length", 68);
                    assertArrayEquals(range(65, 68), r.sink().tokenArray());
                }),
                row("the replaced worker keeps talking (ignored); the new one repeats a batch (trimmed)", 2, 2, h -> {
                    var r = h.submit(6);
                    String d = decoding(h, 1, 65);
                    h.tokens(d, r.id(), 1, 66);
                    h.workerGone(d);
                    String d2 = decoding(h, 2, 67);
                    h.tokens(d, r.id(), 2, 99, 99);
                    h.tokens(d2, r.id(), 1, 68);
                    h.tokens(d2, r.id(), 1, 68);
                    h.finish(d2, r.id(), 2, "length", 69, 70);
                    assertArrayEquals(range(65, 70), r.sink().tokenArray());
                }),
                row("decode start refused (KV gone): moved after the first token", 2, 2, h -> {
                    var r = h.submit(3);
                    h.workers.prefillDone(1, 65);
                    h.workers.decodeStart(1).fail(WorkerFailure.KV_MISSING);
                    assertArrayEquals(
                            concat(r.prompt(), new int[] {65}),
                            h.workers.prefill(2).message.promptTokens());
                    String d2 = decoding(h, 2, 66);
                    h.finish(d2, r.id(), 1, "length", 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),

                // ---- stall ----
                new Row(
                        "a decode worker that stops stepping loses its stream",
                        2,
                        2,
                        s -> s.withDecodeStallTimeoutMs(500),
                        h -> {
                            var r = h.submit(4);
                            String d = decoding(h, 1, 65);
                            h.tokens(d, r.id(), 1, 66);
                            h.loop.advance(600);
                            h.router.moveStalled(worker -> 0L);
                            h.loop.runPending();
                            assertEquals(2, h.workers.prefills.size(), "moved");
                            String d2 = decoding(h, 2, 67);
                            assertNotEquals(d, d2);
                            h.finish(d2, r.id(), 1, "length", 68);
                            assertArrayEquals(range(65, 68), r.sink().tokenArray());
                        }),
                new Row(
                        "a request waiting on a busy decode worker stays",
                        2,
                        2,
                        s -> s.withDecodeStallTimeoutMs(500),
                        h -> {
                            var r = h.submit(3);
                            String d = decoding(h, 1, 65);
                            h.loop.advance(600);
                            h.router.moveStalled(worker -> h.loop.nanoTime()); // its steps go on
                            assertEquals(1, h.workers.prefills.size(), "not moved");
                            h.finish(d, r.id(), 1, "length", 66, 67);
                            assertEquals("finish:length", r.sink().outcome());
                        }),

                // ---- client cancel ----
                row("cancelled while prefilling: both workers told, nothing more reaches the client", 2, 2, h -> {
                    var r = h.submit(5);
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    r.handle().cancel();
                    h.loop.runPending();
                    assertEquals(List.of("cancelled"), h.workers.cancelsTo("p1"));
                    assertEquals(List.of("cancelled"), h.workers.cancelsTo(d));
                    h.workers.prefillDone(1, 65);
                    assertEquals(0, r.sink().tokens.size());
                    assertEquals(0, r.sink().endings);
                    assertEquals(1, h.outcomes("cancelled"));
                }),
                row("cancelled while decoding: later tokens are dropped", 2, 2, h -> {
                    var r = h.submit(5);
                    String d = decoding(h, 1, 65);
                    h.tokens(d, r.id(), 1, 66);
                    r.handle().cancel();
                    h.loop.runPending();
                    assertEquals(List.of("cancelled"), h.workers.cancelsTo(d));
                    h.tokens(d, r.id(), 2, 67);
                    assertArrayEquals(range(65, 66), r.sink().tokenArray());
                }),
                row("cancelled before it had an id: never dispatched", 2, 2, h -> {
                    h.holdIds = true;
                    var r = h.submit(5);
                    r.handle().cancel();
                    h.loop.runPending();
                    h.pendingIds.get(0).complete(7L);
                    h.loop.runPending();
                    assertEquals(0, h.workers.prefills.size());
                    assertEquals(0, h.workers.cancels.size());
                }),

                // ---- late messages of an old attempt ----
                row("the old prefill answers after the request moved: ignored", 2, 2, h -> {
                    var r = h.submit(4);
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    h.workerGone(d);
                    assertEquals(List.of("moved:1"), h.workers.cancelsTo("p1"), "the prefill in flight is stopped");
                    assertEquals(2, h.workers.prefills.size());
                    h.workers.prefillDone(1, 99);
                    h.loop.runPending();
                    assertEquals(0, r.sink().tokens.size(), "the old attempt's first token is not sent");
                    assertEquals(0, h.workers.decodeStarts.size());
                    String d2 = decoding(h, 2, 65);
                    h.finish(d2, r.id(), 1, "length", 66, 67, 68);
                    assertArrayEquals(range(65, 68), r.sink().tokenArray());
                }),
                row("the old decode start fails after the request moved: ignored", 2, 2, h -> {
                    var r = h.submit(3);
                    h.workers.prefillDone(1, 65);
                    String d = h.workers.decodeStart(1).worker;
                    h.workerGone(d);
                    h.workers.decodeStart(1).fail(WorkerFailure.GONE);
                    assertEquals(2, h.workers.prefills.size(), "one move, not two");
                    String d2 = decoding(h, 2, 66);
                    h.finish(d2, r.id(), 1, "length", 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),
                row("a move dispatches again only once the old decode worker confirmed its cancel", 1, 2, h -> {
                    h.workers.holdConfirmations = true;
                    var r = h.submit(3);
                    String d = decoding(h, 1, 65);
                    h.decodeError(d, r.id(), 1, "decode step failed");
                    assertEquals(1, h.workers.prefills.size(), "waiting for the confirmation");
                    h.workers.heldConfirmations.get(0).complete();
                    assertEquals(2, h.workers.prefills.size(), "dispatched once confirmed");
                    String d2 = decoding(h, 2, 66);
                    assertNotEquals(d, d2);
                    h.finish(d2, r.id(), 1, "length", 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),

                // ---- ends without a worker's help ----
                new Row(
                        "the request times out: 504, and its workers are told",
                        2,
                        2,
                        s -> s.withRequestTimeoutMs(1000),
                        h -> {
                            var r = h.submit(5);
                            String d = decoding(h, 1, 65);
                            h.loop.advance(1001);
                            assertEquals("error:504 request_timeout", r.sink().outcome());
                            assertEquals(List.of("request_timeout"), h.workers.cancelsTo(d));
                            assertEquals(1, h.outcomes("timeout"));
                        }),
                row("the first token ends the stream: no decode start, its KV freed", 2, 2, h -> {
                    var r = h.submit(5);
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    h.workers.prefillDone(1, CoreHarness.EOS);
                    h.loop.runPending();
                    assertEquals("finish:stop", r.sink().outcome());
                    assertEquals(0, h.workers.decodeStarts.size());
                    assertEquals(List.of("finished_at_first_token"), h.workers.cancelsTo(d));
                }),
                new Row("over max-in-flight: 429 at once, nothing taken", 1, 1, s -> s.withMaxInFlight(1), h -> {
                    var first = h.submit(2);
                    var second = h.submit(2);
                    assertEquals("error:429 overloaded", second.sink().outcome());
                    assertEquals(1, h.workers.prefills.size());
                    String d = decoding(h, 1, 65);
                    h.finish(d, first.id(), 1, "length", 66);
                }),
                row("a session returns to its decode worker", 2, 2, h -> {
                    var first = h.submit(2, "alice");
                    String d = decoding(h, 1, 65);
                    h.finish(d, first.id(), 1, "length", 66);
                    assertEquals(d, h.affinity.get("alice"));
                    var second = h.submit(2, "alice");
                    assertEquals(d, h.workers.prefill(2).message.decodeWorkerId());
                    decoding(h, 2, 65);
                    h.finish(d, second.id(), 1, "length", 66);
                    assertEquals("finish:length", second.sink().outcome());
                }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void eventSequence(Row row) {
        CoreHarness h = new CoreHarness(
                row.prefill(),
                row.decode(),
                row.settings().apply(TandemConfig.defaults().router()));
        row.script().accept(h);
        h.loop.runPending();
        assertEquals("", h.leftovers(), "everything released");
        assertTrue(h.workers.prefills.stream().allMatch(c -> c.message.requestId() >= 100), "ids from the id source");
    }
}
