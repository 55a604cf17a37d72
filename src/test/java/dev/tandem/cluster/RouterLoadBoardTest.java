package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.RouterLoad;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The board counts the other replicas' reports, replaces them, and forgets them by TTL or member departure. */
class RouterLoadBoardTest {
    private static final long MS = 1_000_000;

    private final RouterLoadBoard board = new RouterLoadBoard(null, null, null, "router-self", 1000);

    @Test
    void sumsTheOtherReplicasAndIgnoresItsOwnEcho() {
        board.accept(new RouterLoad("router-a", "node-a", 3, Map.of("prefill-1", 2, "decode-1", 1)), 0);
        board.accept(new RouterLoad("router-b", "node-b", 1, Map.of("prefill-1", 1)), 0);
        board.accept(new RouterLoad("router-self", "node-s", 9, Map.of("prefill-1", 9)), 0);
        assertEquals(3, board.othersInFlight("prefill-1"));
        assertEquals(1, board.othersInFlight("decode-1"));
        assertEquals(0, board.othersInFlight("prefill-2"));
        assertEquals(2, board.reports().size());
    }

    @Test
    void aNewerReportReplacesTheOlderOne() {
        board.accept(new RouterLoad("router-a", "node-a", 2, Map.of("prefill-1", 2)), 0);
        board.accept(new RouterLoad("router-a", "node-a", 0, Map.of()), 10 * MS);
        assertEquals(0, board.othersInFlight("prefill-1"));
    }

    @Test
    void aReportOlderThanTheTtlStopsCounting() {
        board.accept(new RouterLoad("router-a", "node-a", 2, Map.of("prefill-1", 2)), 0);
        board.accept(new RouterLoad("router-b", "node-b", 1, Map.of("prefill-1", 1)), 900 * MS);
        board.sweep(1001 * MS);
        assertEquals(1, board.othersInFlight("prefill-1"));
        assertEquals(1, board.reports().size());
    }

    @Test
    void aDepartedMembersReplicasAreDroppedAtOnce() {
        board.accept(new RouterLoad("router-a", "node-a", 2, Map.of("prefill-1", 2)), 0);
        board.accept(new RouterLoad("router-b", "node-b", 1, Map.of("prefill-1", 1)), 0);
        board.dropNode("node-a");
        assertEquals(1, board.othersInFlight("prefill-1"));
        board.dropNode("node-unknown");
        assertEquals(1, board.othersInFlight("prefill-1"));
    }
}
