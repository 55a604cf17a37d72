package dev.tandem.security;

import dev.tandem.config.ConnectionLimits;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts one surface's open connections, in all and per client address, against its {@link ConnectionLimits}.
 * Connections open and close on several event loops, so the counts are atomic; a refused connection takes
 * no place.
 */
public final class ConnectionLimiter {
    private final String surface;
    private final ConnectionLimits limits;
    private final AtomicInteger open = new AtomicInteger();
    /** Per-key {@code compute} keeps each address's count and its removal at zero atomic. */
    private final ConcurrentHashMap<String, Integer> byAddress = new ConcurrentHashMap<>();

    /** {@code surface} names the configuration section in refusals ({@code http}, {@code bridge}, ...). */
    public ConnectionLimiter(String surface, ConnectionLimits limits) {
        this.surface = surface;
        this.limits = limits;
    }

    /**
     * Takes a place for a connection from {@code address}: null when taken (give it back with
     * {@link #release}), else why not, in words for the client.
     */
    public String admit(String address) {
        if (limits.max() > 0 && open.incrementAndGet() > limits.max()) {
            open.decrementAndGet();
            return "this server holds " + limits.max() + " connections at once (" + surface
                    + ".max-connections), all taken: retry later";
        }
        if (limits.max() <= 0) {
            open.incrementAndGet();
        }
        if (limits.perAddress() > 0) {
            boolean[] full = new boolean[1];
            byAddress.compute(address, (a, n) -> {
                int now = n == null ? 0 : n;
                full[0] = now >= limits.perAddress();
                return full[0] ? n : now + 1;
            });
            if (full[0]) {
                open.decrementAndGet();
                return "your address " + address + " already holds " + limits.perAddress() + " connections (" + surface
                        + ".max-connections-per-address): close one or retry later";
            }
        }
        return null;
    }

    /** Gives back the place {@link #admit} took for a connection from {@code address}. */
    public void release(String address) {
        open.decrementAndGet();
        if (limits.perAddress() > 0) {
            // At zero the address is forgotten, so a scan of many addresses leaves no entries behind.
            byAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
        }
    }

    /** Connections open now (a gauge). */
    public int open() {
        return open.get();
    }

    /** Addresses with a connection open now (tests: a closed connection's address is forgotten). */
    int addresses() {
        return byAddress.size();
    }
}
