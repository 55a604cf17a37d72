package dev.tandem.router;

import static dev.tandem.router.EventSequence.range;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.TestSettings;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * How requests end besides finishing on their decode worker — the client cancels, the deadline
 * passes, the first token or a stop string ends the stream, the router is full — and what each ending
 * leaves behind: nothing, with the workers told. Table-driven over event sequences like
 * {@link RequestLifecycleTest}.
 */
class RequestEndingTest {

    static Stream<EventSequence> sequences() {
        return Stream.of(
                // ---- client cancel ----
                EventSequence.of(
                        "cancelled while prefilling: both workers told, nothing more reaches the client", 2, 2, h -> {
                            var r = h.submit(5);
                            String d = h.workers.prefill(1).message.decodeWorkerId();
                            r.handle().cancel();
                            h.loop.runPending();
                            assertEquals(List.of("cancelled"), h.workers.cancelsTo("p1"));
                            assertEquals(List.of("cancelled"), h.workers.cancelsTo(d));
                            h.workers.prefillDone(1, 65);
                            assertEquals(0, r.sink().tokens.size());
                            assertEquals(1, h.outcomes("cancelled"));
                        }),
                EventSequence.of("cancelled while decoding: later tokens are dropped", 2, 2, h -> {
                    var r = h.submit(5);
                    String d = h.decoding(1, 65);
                    h.tokens(d, r.id(), 1, 66);
                    r.handle().cancel();
                    h.loop.runPending();
                    assertEquals(List.of("cancelled"), h.workers.cancelsTo(d));
                    h.tokens(d, r.id(), 2, 67);
                    assertArrayEquals(range(65, 66), r.sink().tokenArray());
                }),
                EventSequence.of("cancelled while moving: never dispatched again", 2, 2, h -> {
                    h.workers.holdConfirmations = true;
                    var r = h.submit(5);
                    String d = h.decoding(1, 65);
                    h.workerGone(d);
                    r.handle().cancel();
                    h.loop.runPending();
                    h.workers.heldConfirmations.get(0).complete();
                    assertEquals(1, h.workers.prefills.size());
                    assertEquals(1, h.outcomes("cancelled"));
                }),
                EventSequence.of("cancelled before it had an id: never dispatched", 2, 2, h -> {
                    h.holdIds = true;
                    var r = h.submit(5);
                    r.handle().cancel();
                    h.loop.runPending();
                    h.pendingIds.get(0).complete(7L);
                    h.loop.runPending();
                    assertEquals(0, h.workers.prefills.size());
                    assertEquals(0, h.workers.cancels.size());
                    assertEquals("open", r.sink().outcome());
                }),

                // ---- the deadline ----
                EventSequence.of(
                        "the request times out: 504, and its workers are told",
                        2,
                        2,
                        s -> TestSettings.withRequestTimeoutMs(s, 1000),
                        h -> {
                            var r = h.submit(5);
                            String d = h.decoding(1, 65);
                            h.loop.advance(1001);
                            assertEquals("error:504 request_timeout", r.sink().outcome());
                            assertEquals(List.of("request_timeout"), h.workers.cancelsTo(d));
                            assertEquals(1, h.outcomes("timeout"));
                        }),

                // ---- the first token or a stop string ends the stream ----
                EventSequence.of("the first token is the end of sequence: no decode start, its KV freed", 2, 2, h -> {
                    var r = h.submit(5);
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    h.workers.prefillDone(1, CoreHarness.EOS);
                    h.loop.runPending();
                    assertEquals("finish:stop", r.sink().outcome());
                    assertEquals(0, h.workers.decodeStarts.size());
                    assertEquals(List.of("finished_at_first_token"), h.workers.cancelsTo(d));
                }),
                EventSequence.of("max_tokens 1: finished at the first token with length", 2, 2, h -> {
                    var r = h.submit(1);
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    h.workers.prefillDone(1, 65);
                    assertEquals("finish:length", r.sink().outcome());
                    assertArrayEquals(new int[] {65}, r.sink().tokenArray());
                    assertEquals(0, h.workers.decodeStarts.size());
                    assertEquals(List.of("finished_at_first_token"), h.workers.cancelsTo(d));
                }),
                EventSequence.of("a stop string completed by the first token: the workers stop", 2, 2, h -> {
                    var r = h.submit(5, null, "A");
                    String d = h.workers.prefill(1).message.decodeWorkerId();
                    h.workers.prefillDone(1, 65);
                    assertEquals("finish:stop", r.sink().outcome());
                    assertEquals("", r.sink().text.toString(), "a stop string is never part of the output");
                    assertEquals(0, h.workers.decodeStarts.size());
                    assertEquals(List.of("stop_string"), h.workers.cancelsTo(d));
                }),
                EventSequence.of("a stop string across two batches: the decode worker is told to stop", 2, 2, h -> {
                    var r = h.submit(8, null, "CD");
                    String d = h.decoding(1, 65);
                    h.tokens(d, r.id(), 1, 66, 67);
                    h.tokens(d, r.id(), 3, 68, 69);
                    assertEquals("finish:stop", r.sink().outcome());
                    assertEquals("AB", r.sink().text.toString());
                    assertEquals(List.of("stop_string"), h.workers.cancelsTo(d));
                    h.tokens(d, r.id(), 5, 70);
                    assertEquals("AB", r.sink().text.toString(), "nothing after the end");
                }),

                // ---- nobody to serve it ----
                EventSequence.of("every decode worker filtered out: a typed 503 at once", 2, 2, h -> {
                    h.drain("d1");
                    h.drain("d2");
                    var r = h.submit(3);
                    assertEquals("error:503 no_decode_workers", r.sink().outcome());
                    assertEquals(0, h.workers.prefills.size());
                }),
                EventSequence.of("every prefill worker filtered out: a typed 503 at once", 2, 1, h -> {
                    h.drain("p1");
                    h.drain("p2");
                    var r = h.submit(3);
                    assertEquals("error:503 no_prefill_workers", r.sink().outcome());
                }),

                // ---- load and admission ----
                EventSequence.of(
                        "over max-in-flight: 429 at once, nothing taken",
                        1,
                        1,
                        s -> TestSettings.withMaxInFlight(s, 1),
                        h -> {
                            var first = h.submit(2);
                            var second = h.submit(2);
                            assertEquals("error:429 overloaded", second.sink().outcome());
                            assertEquals(1, h.workers.prefills.size());
                            assertEquals("d1=1,p1=1", h.loads(), "only the first counts");
                            String d = h.decoding(1, 65);
                            h.finish(d, first.id(), 1, "length", 66);
                        }),
                EventSequence.of("two requests on one pair: each gives back only its own load", 1, 1, h -> {
                    var first = h.submit(3);
                    var second = h.submit(3);
                    assertEquals("d1=2,p1=2", h.loads());
                    h.decoding(1, 65);
                    assertEquals("d1=2,p1=1", h.loads());
                    h.finish("d1", first.id(), 1, "length", 66, 67);
                    assertEquals("d1=1,p1=1", h.loads(), "the second still holds its pair");
                    h.decoding(2, 65);
                    assertEquals("d1=1", h.loads());
                    h.finish("d1", second.id(), 1, "length", 66, 67);
                }),
                EventSequence.of("a session returns to its decode worker", 2, 2, h -> {
                    var first = h.submit(2, "alice");
                    String d = h.decoding(1, 65);
                    h.finish(d, first.id(), 1, "length", 66);
                    assertEquals(d, h.affinity.get(GenerationRequest.affinityKey("m", "alice")), "recorded per model");
                    var second = h.submit(2, "alice");
                    assertEquals(d, h.workers.prefill(2).message.decodeWorkerId());
                    h.decoding(2, 65);
                    h.finish(d, second.id(), 1, "length", 66);
                    assertEquals("finish:length", second.sink().outcome());
                }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sequences")
    void eventSequence(EventSequence sequence) {
        sequence.play();
    }
}
