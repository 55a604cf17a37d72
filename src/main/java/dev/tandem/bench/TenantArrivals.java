package dev.tandem.bench;

import dev.tandem.bench.trace.TraceRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The arrivals of {@code bench route --tenants}: each tenant a Poisson process at its rate (requests per
 * second of trace time), seeded by its name, drawing the trace's requests in order from the first — its
 * i-th request is the trace's i-th (its prompt length, cache blocks and output length) — merged in time
 * order and cut at the run's request count. So a tenant sends the same requests at the same times whoever
 * shares the cluster with it: its solo run and its run beside a noisy neighbour differ only in the
 * neighbour. A tenant's cache block ids are salted with its name: tenants share no prefixes, as different
 * teams' prompts would not.
 *
 * @param requests the requests at their arrival times
 * @param tenants  whose each request is, parallel to {@code requests}
 */
record TenantArrivals(List<TraceRequest> requests, List<TenantSpec> tenants) {
    static final long SEED = 0x7e4a47L;

    /** {@code count} arrivals over all tenants. */
    static TenantArrivals of(List<TraceRequest> trace, List<TenantSpec> specs, int count) {
        int n = specs.size();
        Random[] random = new Random[n];
        double[] next = new double[n];
        int[] drawn = new int[n];
        for (int t = 0; t < n; t++) {
            random[t] = new Random(SEED ^ specs.get(t).name().hashCode());
            next[t] = gap(random[t], specs.get(t).rate());
        }
        List<TraceRequest> requests = new ArrayList<>(count);
        List<TenantSpec> tenants = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int t = 0;
            for (int k = 1; k < n; k++) {
                if (next[k] < next[t]) {
                    t = k;
                }
            }
            TraceRequest r = trace.get(drawn[t]++ % trace.size());
            long salt = specs.get(t).name().hashCode() * 0x9E3779B97F4A7C15L;
            long[] ids = r.hashIds().clone();
            for (int b = 0; b < ids.length; b++) {
                ids[b] ^= salt;
            }
            requests.add(new TraceRequest((long) (next[t] * 1000), r.inputLength(), r.outputLength(), ids));
            tenants.add(specs.get(t));
            next[t] += gap(random[t], specs.get(t).rate());
        }
        return new TenantArrivals(List.copyOf(requests), List.copyOf(tenants));
    }

    /** An exponential gap, in seconds, of a Poisson process at {@code rate} per second. */
    private static double gap(Random random, double rate) {
        return -Math.log(1 - random.nextDouble()) / rate;
    }
}
