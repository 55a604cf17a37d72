package dev.tandem.cluster;

import com.hazelcast.map.EntryProcessor;
import java.util.Map;

/**
 * Runs on the member that owns a tenant's minute: takes a request and tokens when both fit (or gives
 * tokens back), atomically, so replicas that ask at the same instant never both get the last unit. The
 * entry is {@code {requests, tokens}} used this minute; the answer is {@code {admitted 1|0, requests,
 * tokens}} after it. Serializable: it travels to the key's owner.
 */
final class QuotaWindow implements EntryProcessor<String, long[], long[]> {
    private static final long serialVersionUID = 1L;

    private final long requestsLimit;
    private final long tokensLimit;
    private final long requests;
    private final long tokens;

    /** @param requests 1 to take a request, 0 to give {@code -tokens} back */
    QuotaWindow(long requestsLimit, long tokensLimit, long requests, long tokens) {
        this.requestsLimit = requestsLimit;
        this.tokensLimit = tokensLimit;
        this.requests = requests;
        this.tokens = tokens;
    }

    @Override
    public long[] process(Map.Entry<String, long[]> entry) {
        long[] used = entry.getValue() == null ? new long[2] : entry.getValue().clone();
        boolean fits = requests <= 0
                || (requestsLimit <= 0 || used[0] + requests <= requestsLimit)
                        && (tokensLimit <= 0 || used[1] + tokens <= tokensLimit);
        if (fits) {
            used[0] += requests;
            used[1] = Math.max(0, used[1] + tokens);
            entry.setValue(used);
        }
        return new long[] {fits ? 1 : 0, used[0], used[1]};
    }
}
