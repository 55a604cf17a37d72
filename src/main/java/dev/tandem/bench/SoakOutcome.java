package dev.tandem.bench;

/**
 * One soak request's row: when it was due (its minute, 0-based), how it travelled, how it ended.
 *
 * @param cancelPlanned the mix asked the client to cancel it after its first tokens
 */
record SoakOutcome(long index, int minute, SoakKind kind, boolean cancelPlanned, SoakResult result) {

    boolean completed() {
        return result.completed();
    }

    boolean cancelled() {
        return result.cancelled();
    }

    SoakError error() {
        return result.error();
    }
}
