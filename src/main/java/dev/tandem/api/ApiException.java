package dev.tandem.api;

/** A request the API refuses, carrying the OpenAI error fields and the HTTP status. */
public final class ApiException extends RuntimeException {
    private final int status;
    private final String type;
    private final String param;
    private final String code;

    public ApiException(int status, String type, String param, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
    }

    /** A failure from parsing a request: an ApiException as it is, anything else (a bug) as a 500. */
    public static ApiException from(Throwable cause) {
        return cause instanceof ApiException e
                ? e
                : new ApiException(500, "server_error", null, "internal_error", "internal error: " + cause);
    }

    public static ApiException invalid(String param, String message) {
        return new ApiException(400, "invalid_request_error", param, "invalid_value", message);
    }

    public static ApiException invalidType(String param, String expected) {
        return new ApiException(
                400, "invalid_request_error", param, "invalid_type", "'" + param + "' must be " + expected);
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String param() {
        return param;
    }

    public String code() {
        return code;
    }
}
