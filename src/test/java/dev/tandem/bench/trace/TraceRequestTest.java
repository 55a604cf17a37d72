package dev.tandem.bench.trace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Requests are immutable values whose ids always cover the prompt. */
class TraceRequestTest {
    @Test
    void copiesTheIdsInAndOut() {
        long[] ids = {1, 2};
        TraceRequest r = new TraceRequest(0, 600, 1, ids);

        ids[0] = 99;
        r.hashIds()[1] = 99;

        assertArrayEquals(new long[] {1, 2}, r.hashIds());
    }

    @Test
    void comparesIdsByValue() {
        assertEquals(new TraceRequest(5, 10, 2, new long[] {3}), new TraceRequest(5, 10, 2, new long[] {3}));
        assertEquals(
                new TraceRequest(5, 10, 2, new long[] {3}).hashCode(),
                new TraceRequest(5, 10, 2, new long[] {3}).hashCode());
        assertFalse(new TraceRequest(5, 10, 2, new long[] {3}).equals(new TraceRequest(5, 10, 2, new long[] {4})));
        assertTrue(new TraceRequest(5, 10, 2, new long[] {3}).toString().contains("[3]"));
    }

    @ParameterizedTest(name = "arrival {0}, input {1}, output {2}, {3} ids")
    @CsvSource({"-1, 10, 1, 1", "0, 0, 1, 0", "0, 10, 0, 1", "0, 513, 1, 1", "0, 512, 1, 2"})
    void refusesWhatNoTraceMeans(long arrival, int input, int output, int ids) {
        assertThrows(IllegalArgumentException.class, () -> new TraceRequest(arrival, input, output, new long[ids]));
    }

    @Test
    void aTraceIsImmutableAndKnowsWhetherItHasPrefixes() {
        List<TraceRequest> requests = new ArrayList<>(List.of(new TraceRequest(0, 10, 1)));
        Trace trace = new Trace("t.csv", requests);
        requests.add(new TraceRequest(0, 10, 1, new long[] {0}));

        assertEquals(1, trace.requests().size());
        assertFalse(trace.hasPrefixes());
        assertTrue(new Trace("t.jsonl", requests).hasPrefixes());
        assertThrows(UnsupportedOperationException.class, () -> trace.requests().clear());
    }
}
