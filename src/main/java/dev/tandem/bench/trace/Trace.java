package dev.tandem.bench.trace;

import java.util.List;
import java.util.Objects;

/**
 * A trace: its requests in arrival order.
 *
 * @param name the file name it was read from, as reports name it
 */
public record Trace(String name, List<TraceRequest> requests) {
    public Trace {
        Objects.requireNonNull(name, "name");
        requests = List.copyOf(requests);
    }

    /** Whether the trace says which prompts share prefixes (Mooncake does, Azure does not). */
    public boolean hasPrefixes() {
        return requests.stream().anyMatch(TraceRequest::hasPrefix);
    }
}
