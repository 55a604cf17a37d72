package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The per-minute aggregation: who counts where, and nearest-rank percentiles over the right requests. */
class SoakMinuteTest {
    private static final double NAN = Double.NaN;

    private static SoakOutcome ok(double ttft, double e2e) {
        return new SoakOutcome(0, 0, SoakKind.SSE_COMPLETION, false, SoakResult.completed(ttft, e2e, null));
    }

    private static SoakOutcome cancelled(double ttft) {
        return new SoakOutcome(0, 0, SoakKind.SSE_CHAT, true, SoakResult.cancelled(ttft));
    }

    private static SoakOutcome failed(SoakError e) {
        return new SoakOutcome(0, 0, SoakKind.WS_CHAT, false, SoakResult.failed(e, "x"));
    }

    /** name, outcomes, requests, completed, cancelled, errors, TTFT p50, p99, E2E p50, p99. */
    static List<Arguments> minutes() {
        List<SoakOutcome> hundred = new ArrayList<>();
        IntStream.rangeClosed(1, 100).forEach(i -> hundred.add(ok(i, 10 * i)));
        return List.of(
                Arguments.of("nothing due", List.of(), 0, 0, 0, 0, NAN, NAN, NAN, NAN),
                Arguments.of(
                        "four completed: nearest rank",
                        List.of(ok(40, 400), ok(10, 100), ok(30, 300), ok(20, 200)),
                        4,
                        4,
                        0,
                        0,
                        20.0,
                        40.0,
                        200.0,
                        400.0),
                Arguments.of("a hundred: p99 is the 99th", hundred, 100, 100, 0, 0, 50.0, 99.0, 500.0, 990.0),
                Arguments.of(
                        "a cancel has a TTFT, no E2E",
                        List.of(ok(10, 100), cancelled(5)),
                        2,
                        1,
                        1,
                        0,
                        5.0,
                        10.0,
                        100.0,
                        100.0),
                Arguments.of(
                        "JSON answers have an E2E, no TTFT",
                        List.of(ok(NAN, 50), ok(8, 60)),
                        2,
                        2,
                        0,
                        0,
                        8.0,
                        8.0,
                        50.0,
                        60.0),
                Arguments.of(
                        "errors count by kind and add no latency",
                        List.of(
                                ok(10, 100),
                                failed(SoakError.HTTP_429),
                                failed(SoakError.HTTP_429),
                                failed(SoakError.HTTP_5XX),
                                failed(SoakError.TIMEOUT),
                                failed(SoakError.IN_FLIGHT_CAP)),
                        6,
                        1,
                        0,
                        5,
                        10.0,
                        10.0,
                        100.0,
                        100.0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("minutes")
    void aggregatesOneMinute(
            String name,
            List<SoakOutcome> outcomes,
            int requests,
            int completed,
            int cancelled,
            int errors,
            double ttftP50,
            double ttftP99,
            double e2eP50,
            double e2eP99) {
        SoakMinute m = SoakMinute.of(3, outcomes);
        assertEquals(3, m.minute());
        assertEquals(requests, m.requests());
        assertEquals(completed, m.completed());
        assertEquals(cancelled, m.cancelled());
        assertEquals(errors, m.errorsTotal());
        assertEquals(ttftP50, m.ttftP50Ms());
        assertEquals(ttftP99, m.ttftP99Ms());
        assertEquals(e2eP50, m.e2eP50Ms());
        assertEquals(e2eP99, m.e2eP99Ms());
        assertEquals(SoakError.values().length, m.errors().size(), "every kind present, zeros included");
    }

    @org.junit.jupiter.api.Test
    void errorKindsAreCountedApart() {
        SoakMinute m = SoakMinute.of(
                1, List.of(failed(SoakError.HTTP_429), failed(SoakError.HTTP_429), failed(SoakError.HTTP_4XX)));
        assertEquals(2, m.errors().get(SoakError.HTTP_429));
        assertEquals(1, m.errors().get(SoakError.HTTP_4XX));
        assertEquals(0, m.errors().get(SoakError.HTTP_5XX));
    }

    /** Rows follow the minute the request was due in; one due after the last minute's end joins the last. */
    @org.junit.jupiter.api.Test
    void splitsByTheMinuteARequestWasDueIn() {
        List<SoakOutcome> outcomes = List.of(at(0), at(0), at(1), at(2), at(5));
        List<SoakMinute> rows = SoakMinute.of(outcomes, 3);
        assertEquals(List.of(1, 2, 3), rows.stream().map(SoakMinute::minute).toList());
        assertEquals(List.of(2, 1, 2), rows.stream().map(SoakMinute::requests).toList());
    }

    private static SoakOutcome at(int minute) {
        return new SoakOutcome(0, minute, SoakKind.JSON_CHAT, false, SoakResult.completed(NAN, 1, null));
    }

    @org.junit.jupiter.api.Test
    void errorStatusesMapToTheirKind() {
        assertEquals(SoakError.HTTP_429, SoakError.ofStatus(429));
        assertEquals(SoakError.HTTP_4XX, SoakError.ofStatus(400));
        assertEquals(SoakError.HTTP_4XX, SoakError.ofStatus(413));
        assertEquals(SoakError.HTTP_5XX, SoakError.ofStatus(503));
    }
}
