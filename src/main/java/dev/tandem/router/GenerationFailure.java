package dev.tandem.router;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Why a request could not be served, with the HTTP status and OpenAI error type/code it maps to.
 */
public final class GenerationFailure extends RuntimeException {
    private final int status;
    private final String type;
    private final String code;
    /** Response headers that go with it: {@code Retry-After} and the rate-limit headers. */
    private final Map<String, String> headers;

    public GenerationFailure(int status, String type, String code, String message) {
        this(status, type, code, message, Map.of());
    }

    private GenerationFailure(int status, String type, String code, String message, Map<String, String> headers) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.code = code;
        this.headers = headers;
    }

    /** This failure with these response headers too. */
    public GenerationFailure withHeaders(Map<String, String> more) {
        Map<String, String> all = new LinkedHashMap<>(headers);
        all.putAll(more);
        return new GenerationFailure(status, type, code, getMessage(), Map.copyOf(all));
    }

    /**
     * The headers to answer with. Every 429 and 503 carries {@code Retry-After} (seconds): the failure's
     * own estimate, else 1.
     */
    public Map<String, String> headers() {
        if ((status == 429 || status == 503) && !headers.containsKey(RETRY_AFTER)) {
            Map<String, String> all = new LinkedHashMap<>(headers);
            all.put(RETRY_AFTER, "1");
            return all;
        }
        return headers;
    }

    public static final String RETRY_AFTER = "Retry-After";

    /**
     * The router's queue has no room for the tenant: it has as many waiting as one tenant may, or the queue is
     * full and the tenant is its heaviest (its newest request makes room for a lighter tenant's).
     */
    public static GenerationFailure queueFull(String tenant, int waiting) {
        return new GenerationFailure(
                429,
                "rate_limit_exceeded",
                "queue_full",
                "the router's queue has no room for tenant '" + tenant + "' (" + waiting
                        + " of its requests waiting); retry shortly");
    }

    /** It waited in the router's queue until its deadline without a worker free to take it. */
    public static GenerationFailure queueTimeout(long waitedMs) {
        return new GenerationFailure(
                429,
                "rate_limit_exceeded",
                "queue_timeout",
                "no worker was free within the request's deadline (" + waitedMs + " ms in the queue); retry later");
    }

    /** Its first token cannot come within its {@code X-SLO-TTFT-Ms} target on any worker. */
    public static GenerationFailure sloUnattainable(long targetMs, long predictedMs) {
        return new GenerationFailure(
                429,
                "rate_limit_exceeded",
                "slo_unattainable",
                "no worker can give the first token within " + targetMs + " ms (best predicted: "
                        + (predictedMs < 0 ? "none" : predictedMs + " ms") + "); retry later or relax X-SLO-TTFT-Ms");
    }

    public static GenerationFailure noWorkers(String role) {
        return new GenerationFailure(
                503, "service_unavailable", "no_" + role + "_workers", "no " + role + " worker is available");
    }

    public static GenerationFailure shuttingDown() {
        return new GenerationFailure(
                503, "service_unavailable", "shutting_down", "this router is shutting down; retry on another replica");
    }

    public static GenerationFailure timeout(long ms) {
        return new GenerationFailure(
                504, "timeout", "request_timeout", "the request did not finish within " + ms + " ms");
    }

    public static GenerationFailure overloaded(int limit) {
        return new GenerationFailure(
                429,
                "rate_limit_exceeded",
                "overloaded",
                "the router has " + limit + " requests in flight, its limit; retry shortly");
    }

    /** Every worker of a role that could take the request refused it for lack of room. */
    public static GenerationFailure workersFull(String role) {
        return new GenerationFailure(
                429,
                "rate_limit_exceeded",
                "workers_at_capacity",
                "every " + role + " worker is at capacity; retry shortly");
    }

    public static GenerationFailure invalid(String message) {
        return new GenerationFailure(400, "invalid_request_error", "invalid_request", message);
    }

    public static GenerationFailure upstream(String message) {
        return new GenerationFailure(502, "server_error", "worker_failed", message);
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String code() {
        return code;
    }
}
