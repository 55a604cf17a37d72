package dev.tandem.bench;

/**
 * One replayed request as its client saw it, in wall-clock milliseconds.
 *
 * @param index            the request's place in the trace
 * @param ttftMs           send to the first generated token (NaN when none came)
 * @param itlMs            gaps between successive chunks of tokens
 * @param e2eMs            send to the end of the stream
 * @param error            why it failed, or null
 * @param tenant           whose it was ({@code bench route --tenants}), or null
 */
public record RequestResult(
        int index,
        long arrivalMs,
        int promptTokens,
        int cachedTokens,
        int completionTokens,
        double ttftMs,
        double[] itlMs,
        double e2eMs,
        String prefillWorker,
        String decodeWorker,
        String error,
        String tenant) {

    /** A request of no tenant. */
    public RequestResult(
            int index,
            long arrivalMs,
            int promptTokens,
            int cachedTokens,
            int completionTokens,
            double ttftMs,
            double[] itlMs,
            double e2eMs,
            String prefillWorker,
            String decodeWorker,
            String error) {
        this(
                index,
                arrivalMs,
                promptTokens,
                cachedTokens,
                completionTokens,
                ttftMs,
                itlMs,
                e2eMs,
                prefillWorker,
                decodeWorker,
                error,
                null);
    }

    /** This result, of {@code tenant}'s request. */
    RequestResult withTenant(String tenant) {
        return new RequestResult(
                index,
                arrivalMs,
                promptTokens,
                cachedTokens,
                completionTokens,
                ttftMs,
                itlMs,
                e2eMs,
                prefillWorker,
                decodeWorker,
                error,
                tenant);
    }

    public boolean ok() {
        return error == null;
    }

    static RequestResult failed(int index, long arrivalMs, int promptTokens, double e2eMs, String error) {
        return new RequestResult(
                index, arrivalMs, promptTokens, 0, 0, Double.NaN, new double[0], e2eMs, null, null, error);
    }
}
