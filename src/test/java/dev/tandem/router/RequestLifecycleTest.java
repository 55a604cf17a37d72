package dev.tandem.router;

import static dev.tandem.router.EventSequence.concat;
import static dev.tandem.router.EventSequence.range;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.tandem.config.TestSettings;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.WorkerFailure;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The request core without a cluster, table-driven over event sequences: retries before the first
 * token, failover mid-stream, late messages of an old attempt, stalls — what workers answer, when,
 * and in which order, and what the client sees. ({@link RequestEndingTest} has the other endings.)
 */
class RequestLifecycleTest {

    static Stream<EventSequence> sequences() {
        return Stream.of(
                EventSequence.of("undisturbed: first token from prefill, the rest from decode", 2, 2, h -> {
                    var r = h.submit(5);
                    assertEquals("d1=1,p1=1", h.loads(), "both workers count it while prefilling");
                    h.workers.prefillDone(1, 65);
                    assertEquals("d1=1", h.loads(), "the prefill worker is done with it");
                    h.workers.decodeStart(1).answer.complete();
                    h.tokens("d1", r.id(), 1, 66, 67);
                    h.finish("d1", r.id(), 3, "length", 68, 69);
                    assertEquals("finish:length", r.sink().outcome());
                    assertArrayEquals(range(65, 69), r.sink().tokenArray());
                    assertEquals("", h.loads());
                    assertEquals(1, h.outcomes("ok"));
                }),

                // ---- the first token ahead of the KV: streamed as soon as the prefill computed it ----
                EventSequence.of("first token ahead of the KV: out at once, not again with PREFILL_DONE", 2, 2, h -> {
                    var r = h.submit(5);
                    assertNotNull(
                            h.workers.prefill(1).message.routerId(), "the prefill worker is told where to send it");
                    assertEquals(r.prompt().length, h.loads.prefillTokens("p1"), "its prompt queued on p1");
                    h.firstToken("p1", r.id(), 1, 65);
                    assertArrayEquals(new int[] {65}, r.sink().tokenArray(), "before the KV's acknowledgement");
                    assertEquals(0, h.workers.decodeStarts.size(), "the decode waits for the KV");
                    assertEquals("d1=1,p1=1", h.loads(), "still prefilling");
                    assertEquals(0, h.loads.prefillTokens("p1"), "computed: shipping the KV is no queued work");
                    h.firstToken("p1", r.id(), 1, 65); // a duplicate changes nothing
                    h.workers.prefillDone(1, 65);
                    h.loop.runPending();
                    assertEquals(65, h.workers.decodeStart(1).message.firstToken());
                    assertEquals(5, h.workers.decodeStart(1).message.maxNewTokens());
                    h.workers.decodeStart(1).answer.complete();
                    h.tokens("d1", r.id(), 1, 66, 67);
                    h.finish("d1", r.id(), 3, "length", 68, 69);
                    assertArrayEquals(range(65, 69), r.sink().tokenArray(), "65 once");
                    assertEquals(1, h.outcomes("ok"));
                }),
                EventSequence.of("first token ahead, then its KV fails: prompt + that token re-prefilled", 2, 2, h -> {
                    var r = h.submit(5);
                    h.firstToken("p1", r.id(), 1, 65);
                    h.workers.prefill(1).fail(WorkerFailure.GONE);
                    var second = h.workers.prefill(2);
                    assertArrayEquals(concat(r.prompt(), range(65, 65)), second.message.promptTokens());
                    String d = h.decoding(2, 66);
                    assertEquals(4, h.workers.decodeStart(1).message.maxNewTokens(), "what is left of max_tokens");
                    h.finish(d, r.id(), 1, "length", 67, 68, 69);
                    assertArrayEquals(range(65, 69), r.sink().tokenArray(), "no duplicate, no gap");
                    assertEquals(1, h.outcomes("failed_over"));
                }),
                EventSequence.of("first token ahead, then every decode worker full: still overload (429)", 1, 1, h -> {
                    var r = h.submit(5);
                    h.firstToken("p1", r.id(), 1, 65);
                    h.workers.prefill(1).fail(WorkerFailure.OVER_CAPACITY);
                    assertEquals("error:429 workers_at_capacity", r.sink().outcome(), "no KV ever landed: retry later");
                    assertEquals("", h.loads());
                }),
                EventSequence.of(
                        "a first token of a dispatch given up, or from another worker, is dropped", 2, 2, h -> {
                            var r = h.submit(4);
                            h.workers.prefill(1).fail(WorkerFailure.GONE);
                            h.firstToken("p1", r.id(), 1, 99); // the abandoned dispatch, late
                            h.firstToken("p2", r.id(), 1, 99); // the current worker, an old attempt number
                            h.firstToken("p1", r.id(), 2, 99); // the current attempt, the wrong worker
                            assertEquals(0, r.sink().tokenArray().length);
                            String d = h.decoding(2, 65);
                            h.finish(d, r.id(), 1, "length", 66, 67, 68);
                            assertArrayEquals(range(65, 68), r.sink().tokenArray());
                        }),
                EventSequence.of("finished at a first token ahead of the KV: both workers drop the KV", 1, 1, h -> {
                    var r = h.submit(1);
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    h.firstToken("p1", r.id(), 1, 65);
                    assertEquals("finish:length", r.sink().outcome());
                    assertArrayEquals(new int[] {65}, r.sink().tokenArray());
                    assertEquals(List.of("finished_at_first_token:1"), h.workers.cancelsTo("p1"));
                    assertEquals(List.of("finished_at_first_token"), h.workers.cancelsTo(d));
                    h.workers.prefillDone(1, 65); // late: the request is over
                    h.loop.runPending();
                    assertEquals(0, h.workers.decodeStarts.size(), "nothing to decode");
                    assertEquals("", h.loads());
                }),

                // ---- retry before the first token: the client sees nothing of it ----
                EventSequence.of("prefill worker answers gone: retried on the other one", 2, 2, h -> {
                    var r = h.submit(5);
                    h.workers.prefill(1).fail(WorkerFailure.GONE);
                    var second = h.workers.prefill(2);
                    assertEquals("p2", second.worker, "the failed prefill worker is avoided");
                    assertEquals(2, second.message.attempt());
                    assertArrayEquals(r.prompt(), second.message.promptTokens(), "nothing was sent: the prompt alone");
                    assertEquals(
                            List.of("moved:1"),
                            h.workers.cancelsTo(h.workers.prefill(1).message.decodeWorkerId()));
                    assertEquals("p1", r.sink().acceptedPrefill, "accepted once, with the first pair");
                    String d = h.decoding(2, 65);
                    h.finish(d, r.id(), 1, "length", 66, 67, 68, 69);
                    assertArrayEquals(range(65, 69), r.sink().tokenArray());
                }),
                EventSequence.of("prefill worker silent (timeout): avoided", 2, 1, h -> {
                    var r = h.submit(3);
                    h.workers.prefill(1).timeOut();
                    assertEquals("p2", h.workers.prefill(2).worker);
                    String d = h.decoding(2, 65);
                    h.finish(d, r.id(), 1, "length", 66, 67);
                    assertEquals("finish:length", r.sink().outcome());
                }),
                EventSequence.of("a malformed PREFILL_DONE: retried elsewhere", 2, 2, h -> {
                    var r = h.submit(3);
                    h.workers.prefill(1).answer.fail(new ProtocolException("field 'first_token' is missing"));
                    assertEquals("p2", h.workers.prefill(2).worker);
                    String d = h.decoding(2, 65);
                    h.finish(d, r.id(), 1, "length", 66, 67);
                    assertEquals("finish:length", r.sink().outcome());
                }),
                EventSequence.of("decode worker full: the other decode worker, the same prefill worker", 1, 2, h -> {
                    var r = h.submit(3);
                    String full = h.workers.prefill(1).message.decodeWorkerId();
                    h.workers.prefill(1).fail(WorkerFailure.OVER_CAPACITY);
                    assertEquals("p1", h.workers.prefill(2).worker, "the prefill worker was not at fault");
                    assertNotEquals(full, h.workers.prefill(2).message.decodeWorkerId());
                    String d = h.decoding(2, 65);
                    h.finish(d, r.id(), 1, "length", 66, 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),
                EventSequence.of("every worker turned it away for lack of room: 429", 1, 1, h -> {
                    var r = h.submit(3);
                    h.workers.prefill(1).fail(WorkerFailure.BUSY);
                    assertEquals("error:429 workers_at_capacity", r.sink().outcome());
                    assertEquals(1, h.outcomes("rejected"));
                }),
                EventSequence.of("a bad request is not retried: 400, and the workers are told", 2, 2, h -> {
                    var r = h.submit(3);
                    h.workers.prefill(1).fail(WorkerFailure.BAD_REQUEST);
                    assertEquals("error:400 invalid_request", r.sink().outcome());
                    assertEquals(1, h.workers.prefills.size());
                    assertEquals(List.of("invalid_request"), h.workers.cancelsTo("p1"));
                }),
                EventSequence.of("gives up after four attempts: 502", 5, 5, h -> {
                    var r = h.submit(3);
                    for (int n = 1; n <= RetryPolicy.MAX_ATTEMPTS; n++) {
                        h.workers.prefill(n).fail(WorkerFailure.KV_TRANSFER_FAILED);
                    }
                    assertEquals(RetryPolicy.MAX_ATTEMPTS, h.workers.prefills.size());
                    assertEquals("error:502 worker_failed", r.sink().outcome());
                }),

                // ---- failover mid-stream: re-prefill prompt + sent tokens, the stream goes on exactly ----
                EventSequence.of("decode worker dies mid-stream", 2, 2, h -> {
                    var r = h.submit(6);
                    String d = h.decoding(1, 65);
                    h.tokens(d, r.id(), 1, 66, 67);
                    h.workerGone(d);
                    var resumed = h.workers.prefill(2);
                    assertArrayEquals(concat(r.prompt(), range(65, 67)), resumed.message.promptTokens());
                    assertNotEquals(d, resumed.message.decodeWorkerId());
                    assertEquals(List.of("moved:1"), h.workers.cancelsTo(d));
                    String d2 = h.decoding(2, 68);
                    assertEquals(3, h.workers.decodeStart(2).message.maxNewTokens(), "what is left of max_tokens");
                    h.finish(d2, r.id(), 1, "length", 69, 70);
                    assertArrayEquals(range(65, 70), r.sink().tokenArray(), "no duplicate, no gap");
                    assertEquals(1, h.outcomes("failed_over"));
                }),
                EventSequence.of("decode step fails on the worker: moved", 2, 2, h -> {
                    var r = h.submit(4);
                    String d = h.decoding(1, 65);
                    h.tokens(d, r.id(), 1, 66);
                    h.decodeError(d, r.id(), 2, "decode step failed");
                    String d2 = h.decoding(2, 67);
                    assertNotEquals(d, d2);
                    h.finish(d2, r.id(), 1, "length", 68);
                    assertArrayEquals(range(65, 68), r.sink().tokenArray());
                }),
                EventSequence.of(
                        "the replaced worker keeps talking (ignored); the new one repeats (trimmed)", 2, 2, h -> {
                            var r = h.submit(6);
                            String d = h.decoding(1, 65);
                            h.tokens(d, r.id(), 1, 66);
                            h.workerGone(d);
                            String d2 = h.decoding(2, 67);
                            h.tokens(d, r.id(), 2, 99, 99);
                            h.tokens(d2, r.id(), 1, 68);
                            h.tokens(d2, r.id(), 1, 68);
                            h.finish(d2, r.id(), 2, "length", 69, 70);
                            assertArrayEquals(range(65, 70), r.sink().tokenArray());
                        }),
                EventSequence.of("decode start refused (KV gone): moved after the first token", 2, 2, h -> {
                    var r = h.submit(3);
                    h.workers.prefillDone(1, 65);
                    h.workers.decodeStart(1).fail(WorkerFailure.KV_MISSING);
                    assertArrayEquals(
                            concat(r.prompt(), new int[] {65}),
                            h.workers.prefill(2).message.promptTokens());
                    String d2 = h.decoding(2, 66);
                    h.finish(d2, r.id(), 1, "length", 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),
                EventSequence.of("decode start unanswered (timeout): moved", 2, 2, h -> {
                    var r = h.submit(3);
                    h.workers.prefillDone(1, 65);
                    String d = h.workers.decodeStart(1).worker;
                    h.workers.decodeStart(1).timeOut();
                    assertNotEquals(d, h.workers.prefill(2).message.decodeWorkerId());
                    String d2 = h.decoding(2, 66);
                    h.finish(d2, r.id(), 1, "length", 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),
                EventSequence.of("the prefill worker leaves mid-prompt: stopped there, moved", 2, 2, h -> {
                    var r = h.submit(3);
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    h.workerGone("p1");
                    assertEquals(List.of("moved:1"), h.workers.cancelsTo("p1"));
                    assertEquals(List.of("moved:1"), h.workers.cancelsTo(d), "its KV on the way is freed");
                    assertEquals("p2", h.workers.prefill(2).worker);
                    String d2 = h.decoding(2, 65);
                    h.finish(d2, r.id(), 1, "length", 66, 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),

                // ---- late messages of an old attempt ----
                EventSequence.of("while moving, the old PREFILL_DONE arrives: ignored", 2, 2, h -> {
                    h.workers.holdConfirmations = true;
                    var r = h.submit(4);
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    h.workerGone(d);
                    assertEquals("", h.loads(), "moving: nothing held");
                    h.workers.prefillDone(1, 99);
                    h.loop.runPending();
                    assertEquals("open", r.sink().outcome(), "no failure, no token");
                    assertEquals(0, r.sink().tokens.size());
                    assertEquals(0, h.workers.decodeStarts.size());
                    h.workers.heldConfirmations.get(0).complete();
                    String d2 = h.decoding(2, 65);
                    h.finish(d2, r.id(), 1, "length", 66, 67, 68);
                    assertArrayEquals(range(65, 68), r.sink().tokenArray());
                }),
                EventSequence.of("while moving, the old prefill fails: ignored", 2, 2, h -> {
                    h.workers.holdConfirmations = true;
                    var r = h.submit(3);
                    h.workerGone(h.workers.prefill(1).message.decodeWorkerId());
                    h.workers.prefill(1).fail(WorkerFailure.GONE);
                    assertEquals(1, h.workers.heldConfirmations.size(), "one move, not two");
                    assertEquals("open", r.sink().outcome());
                    h.workers.heldConfirmations.get(0).complete();
                    assertEquals(2, h.workers.prefills.size());
                    String d2 = h.decoding(2, 65);
                    h.finish(d2, r.id(), 1, "length", 66, 67);
                    assertEquals("finish:length", r.sink().outcome());
                }),
                EventSequence.of("while moving, the old decode start fails: ignored", 2, 2, h -> {
                    h.workers.holdConfirmations = true;
                    var r = h.submit(3);
                    h.workers.prefillDone(1, 65);
                    h.decodeError(h.workers.decodeStart(1).worker, r.id(), 1, "decode step failed");
                    h.workers.decodeStart(1).fail(WorkerFailure.KV_MISSING);
                    assertEquals(1, h.workers.heldConfirmations.size(), "one move, not two");
                    h.workers.heldConfirmations.get(0).complete();
                    String d2 = h.decoding(2, 66);
                    h.finish(d2, r.id(), 1, "length", 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),
                EventSequence.of("after the next dispatch, the old PREFILL_DONE arrives: ignored", 2, 2, h -> {
                    var r = h.submit(4);
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    h.workerGone(d);
                    assertEquals(List.of("moved:1"), h.workers.cancelsTo("p1"), "the prefill in flight is stopped");
                    assertEquals(2, h.workers.prefills.size());
                    h.workers.prefillDone(1, 99);
                    h.loop.runPending();
                    assertEquals(0, r.sink().tokens.size(), "the old attempt's first token is not sent");
                    assertEquals(0, h.workers.decodeStarts.size());
                    String d2 = h.decoding(2, 65);
                    h.finish(d2, r.id(), 1, "length", 66, 67, 68);
                    assertArrayEquals(range(65, 68), r.sink().tokenArray());
                }),
                EventSequence.of("after the next dispatch, the old decode start fails: ignored", 2, 2, h -> {
                    var r = h.submit(3);
                    h.workers.prefillDone(1, 65);
                    String d = h.workers.decodeStart(1).worker;
                    h.workerGone(d);
                    h.workers.decodeStart(1).fail(WorkerFailure.GONE);
                    assertEquals(2, h.workers.prefills.size(), "one move, not two");
                    String d2 = h.decoding(2, 66);
                    h.finish(d2, r.id(), 1, "length", 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),
                EventSequence.of("a move dispatches again only once the old decode worker confirmed", 1, 2, h -> {
                    h.workers.holdConfirmations = true;
                    var r = h.submit(3);
                    String d = h.decoding(1, 65);
                    h.decodeError(d, r.id(), 1, "decode step failed");
                    assertEquals(1, h.workers.prefills.size(), "waiting for the confirmation");
                    h.workers.heldConfirmations.get(0).complete();
                    assertEquals(2, h.workers.prefills.size(), "dispatched once confirmed");
                    String d2 = h.decoding(2, 66);
                    assertNotEquals(d, d2);
                    h.finish(d2, r.id(), 1, "length", 67);
                    assertArrayEquals(range(65, 67), r.sink().tokenArray());
                }),

                // ---- stall ----
                EventSequence.of(
                        "a decode worker that stops stepping loses its stream",
                        2,
                        2,
                        s -> TestSettings.withDecodeStallTimeoutMs(s, 500),
                        h -> {
                            var r = h.submit(4);
                            String d = h.decoding(1, 65);
                            h.tokens(d, r.id(), 1, 66);
                            h.loop.advance(600);
                            h.router.moveStalled(worker -> 0L);
                            h.loop.runPending();
                            assertEquals(2, h.workers.prefills.size(), "moved");
                            String d2 = h.decoding(2, 67);
                            assertNotEquals(d, d2);
                            h.finish(d2, r.id(), 1, "length", 68);
                            assertArrayEquals(range(65, 68), r.sink().tokenArray());
                        }),
                EventSequence.of(
                        "a request waiting on a busy decode worker stays",
                        2,
                        2,
                        s -> TestSettings.withDecodeStallTimeoutMs(s, 500),
                        h -> {
                            var r = h.submit(3);
                            String d = h.decoding(1, 65);
                            h.loop.advance(600);
                            h.router.moveStalled(worker -> h.loop.nanoTime()); // its steps go on
                            assertEquals(1, h.workers.prefills.size(), "not moved");
                            h.finish(d, r.id(), 1, "length", 66, 67);
                            assertEquals("finish:length", r.sink().outcome());
                        }),
                EventSequence.of(
                        "a request that just got a token stays, whatever the worker's steps say",
                        2,
                        2,
                        s -> TestSettings.withDecodeStallTimeoutMs(s, 500),
                        h -> {
                            var r = h.submit(4);
                            String d = h.decoding(1, 65);
                            h.loop.advance(400);
                            h.tokens(d, r.id(), 1, 66);
                            h.loop.advance(400);
                            h.router.moveStalled(worker -> 0L);
                            assertEquals(1, h.workers.prefills.size(), "not moved");
                            h.finish(d, r.id(), 2, "length", 67, 68);
                            assertArrayEquals(range(65, 68), r.sink().tokenArray());
                        }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sequences")
    void eventSequence(EventSequence sequence) {
        sequence.play();
    }
}
