package dev.tandem.router;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where a request is in its life on a router. What it holds follows from its state — the prefill
 * worker's load while {@link #PREFILLING}, the decode worker's while {@link #PREFILLING} or
 * {@link #DECODING} — so leaving a state releases exactly what that state held.
 */
public enum RequestState {
    /** Admitted; waiting for its id and its session's affinity. */
    ADMITTED,
    /** PREFILL_REQUEST sent: the prefill worker computes the prompt and ships its KV to the decode worker. */
    PREFILLING,
    /** DECODE_REQUEST sent (or about to be): tokens come from the decode worker. */
    DECODING,
    /** Its workers failed or went away; it dispatches again once the old decode worker confirmed the cancel. */
    MOVING,
    /** Finished, failed or cancelled; nothing is held any more. */
    ENDED;

    private Set<RequestState> next;

    static {
        ADMITTED.next = EnumSet.of(PREFILLING, ENDED);
        PREFILLING.next = EnumSet.of(DECODING, MOVING, ENDED);
        DECODING.next = EnumSet.of(MOVING, ENDED);
        MOVING.next = EnumSet.of(PREFILLING, ENDED);
        ENDED.next = EnumSet.noneOf(RequestState.class);
    }

    public boolean canMoveTo(RequestState state) {
        return next.contains(state);
    }

    /** The prefill worker counts this request against its load. */
    boolean holdsPrefill() {
        return this == PREFILLING;
    }

    /** The decode worker counts this request against its load (its KV is on the way, or decoding). */
    boolean holdsDecode() {
        return this == PREFILLING || this == DECODING;
    }
}
