package dev.tandem.upstream;

/**
 * An upstream request that did not succeed. {@code status} is the upstream's HTTP status, or 0 when
 * there was none (refused, reset, timed out, a malformed answer). A 4xx is the client's error, passed
 * through; anything else is the worker's failure.
 */
public final class UpstreamException extends RuntimeException {
    private final int status;

    public UpstreamException(int status, String message) {
        super(message);
        this.status = status;
    }

    public UpstreamException(String message, Throwable cause) {
        super(message, cause);
        this.status = 0;
    }

    public int status() {
        return status;
    }

    /** The request was refused for its own sake: another worker would refuse it too. */
    public boolean clientError() {
        return status >= 400 && status < 500;
    }
}
