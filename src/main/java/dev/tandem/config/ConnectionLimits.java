package dev.tandem.config;

/**
 * How many connections a surface holds at once (keys {@code max-connections} and
 * {@code max-connections-per-address} of {@code http}, {@code bridge} and {@code worker-bridge}). A
 * connection over either limit is told why and closed.
 *
 * @param max        connections at once on the surface; 0 = no limit
 * @param perAddress connections at once from one client address; 0 = no limit (the default: behind a load
 *                   balancer or an ingress every client has its address)
 */
public record ConnectionLimits(int max, int perAddress) {
    public static final ConnectionLimits NONE = new ConnectionLimits(0, 0);

    static ConnectionLimits read(ConfigSection s, int defaultMax) {
        return new ConnectionLimits((int) s.integer("max-connections", defaultMax, 0, 10_000_000), (int)
                s.integer("max-connections-per-address", 0, 0, 10_000_000));
    }
}
