package dev.tandem.router;

import java.util.List;

/**
 * Finds stop strings in streamed text. Text that could still turn out to be the start of a stop
 * string is held back, so a stop string split across tokens is never partly sent; once one matches,
 * everything from its first character on is dropped.
 */
final class StopStringMatcher {
    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private boolean stopped;

    StopStringMatcher(List<String> stops) {
        this.stops = List.copyOf(stops);
    }

    boolean stopped() {
        return stopped;
    }

    /** Adds decoded text; returns the part that is safe to send now. */
    String push(String text) {
        if (stopped) {
            return "";
        }
        if (stops.isEmpty()) {
            return text;
        }
        held.append(text);
        int first = -1;
        for (String stop : stops) {
            int at = held.indexOf(stop);
            if (at >= 0 && (first < 0 || at < first)) {
                first = at;
            }
        }
        if (first >= 0) {
            stopped = true;
            String out = held.substring(0, first);
            held.setLength(0);
            return out;
        }
        int keep = longestSuffixThatStartsAStop();
        String out = held.substring(0, held.length() - keep);
        held.delete(0, held.length() - keep);
        return out;
    }

    /** The end of the stream: what was held back is sent after all. */
    String flush() {
        String out = stopped ? "" : held.toString();
        held.setLength(0);
        return out;
    }

    private int longestSuffixThatStartsAStop() {
        String h = held.toString();
        int best = 0;
        for (String stop : stops) {
            int max = Math.min(stop.length() - 1, h.length());
            for (int k = max; k > best; k--) {
                if (h.regionMatches(h.length() - k, stop, 0, k)) {
                    best = k;
                    break;
                }
            }
        }
        return best;
    }
}
