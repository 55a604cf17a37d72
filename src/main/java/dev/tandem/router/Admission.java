package dev.tandem.router;

/**
 * Whether a router takes one more request: up to {@code router.max-in-flight} at once, none once it
 * shuts down. Counts what it admitted until each request ends. Event loop only.
 */
final class Admission {
    private final int maxInFlight;
    private boolean stopping;
    private int admitted;

    Admission(int maxInFlight) {
        this.maxInFlight = maxInFlight;
    }

    /** Takes a place, or says why not (the request is refused with it, holding nothing). */
    GenerationFailure admit() {
        if (stopping) {
            return GenerationFailure.shuttingDown();
        }
        if (admitted >= maxInFlight) {
            return GenerationFailure.overloaded(maxInFlight);
        }
        admitted++;
        return null;
    }

    /** An admitted request ended, or went to wait in the router's queue (which has bounds of its own). */
    void release() {
        admitted--;
    }

    /** Whether a request leaving the router's queue can take a place now. */
    boolean hasRoom() {
        return admitted < maxInFlight;
    }

    /** A request left the router's queue for a worker: it holds a place again ({@link #hasRoom} said so). */
    void take() {
        admitted++;
    }

    /** From now on new requests are refused (503); those running go on. */
    void stopAdmitting() {
        stopping = true;
    }

    boolean stopping() {
        return stopping;
    }

    /** Requests admitted and not yet ended. */
    int admitted() {
        return admitted;
    }
}
