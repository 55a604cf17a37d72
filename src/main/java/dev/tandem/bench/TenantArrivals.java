package dev.tandem.bench;

import dev.tandem.bench.trace.TraceRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The arrivals of {@code bench route --tenants}: each tenant a Poisson process at its rate (requests per
 * second of trace time), merged in time order; the n-th arrival of the merged stream, whoever's it is, takes
 * the trace's n-th request (its prompt, cache blocks and output length) at the new time. Seeded: every policy
 * and every run sees the same arrivals.
 *
 * @param requests the trace's requests at their new arrival times
 * @param tenants  whose each request is, parallel to {@code requests}
 */
record TenantArrivals(List<TraceRequest> requests, List<TenantSpec> tenants) {
    static final long SEED = 0x7e4a47L;

    static TenantArrivals of(List<TraceRequest> trace, List<TenantSpec> specs) {
        Random random = new Random(SEED);
        double[] next = new double[specs.size()];
        for (int t = 0; t < specs.size(); t++) {
            next[t] = gap(random, specs.get(t).rate());
        }
        List<TraceRequest> requests = new ArrayList<>(trace.size());
        List<TenantSpec> tenants = new ArrayList<>(trace.size());
        for (TraceRequest r : trace) {
            int t = 0;
            for (int i = 1; i < next.length; i++) {
                if (next[i] < next[t]) {
                    t = i;
                }
            }
            requests.add(new TraceRequest((long) (next[t] * 1000), r.inputLength(), r.outputLength(), r.hashIds()));
            tenants.add(specs.get(t));
            next[t] += gap(random, specs.get(t).rate());
        }
        return new TenantArrivals(List.copyOf(requests), List.copyOf(tenants));
    }

    /** An exponential gap, in seconds, of a Poisson process at {@code rate} per second. */
    private static double gap(Random random, double rate) {
        return -Math.log(1 - random.nextDouble()) / rate;
    }
}
