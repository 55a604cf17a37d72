package dev.tandem.router;

/**
 * Why a request could not be served, with the HTTP status and OpenAI error type/code it maps to.
 */
public final class GenerationFailure extends RuntimeException {
    private final int status;
    private final String type;
    private final String code;

    public GenerationFailure(int status, String type, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.code = code;
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
