package dev.tandem.bench;

import java.util.Locale;

/**
 * Why a soak request failed. 429 is apart from the other 4xx: it is the target refusing load, not the
 * bench sending something wrong. {@link #IN_FLIGHT_CAP} is the bench's own refusal: the request was due
 * while {@code --max-in-flight} requests were still open, so it was never sent.
 */
enum SoakError {
    HTTP_4XX,
    HTTP_429,
    HTTP_5XX,
    /** A 2xx answer that went wrong: an error event or frame, no {@code [DONE]} or usage, an unreadable body. */
    STREAM,
    /** The connection failed or closed under the request. */
    TRANSPORT,
    TIMEOUT,
    IN_FLIGHT_CAP;

    /** The name in summary.json and minutes.csv. */
    String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind of a non-2xx status (an HTTP answer's, or a WebSocket error frame's). */
    static SoakError ofStatus(int status) {
        if (status == 429) {
            return HTTP_429;
        }
        return status >= 500 ? HTTP_5XX : HTTP_4XX;
    }
}
