package dev.tandem.bench;

/**
 * How one sent soak request ended, as its transport saw it.
 *
 * @param error     why it failed, or null
 * @param detail    the failure's message (a status and body, an exception), or null
 * @param cancelled the client cancelled it after its first tokens, as planned (not an error)
 * @param ttftMs    send to the first chunk with text; NaN for JSON answers and when none came
 * @param e2eMs     send to the end of the answer; NaN unless completed
 * @param text      the generated text when the request asked to keep it (a chat session's turn), else null
 */
record SoakResult(SoakError error, String detail, boolean cancelled, double ttftMs, double e2eMs, String text) {

    static SoakResult completed(double ttftMs, double e2eMs, String text) {
        return new SoakResult(null, null, false, ttftMs, e2eMs, text);
    }

    static SoakResult cancelled(double ttftMs) {
        return new SoakResult(null, null, true, ttftMs, Double.NaN, null);
    }

    static SoakResult failed(SoakError error, String detail) {
        return new SoakResult(error, detail, false, Double.NaN, Double.NaN, null);
    }

    boolean completed() {
        return error == null && !cancelled;
    }
}
