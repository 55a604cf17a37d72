package dev.tandem.upstream.kvevents;

/** An engine's KV event message that is not a {@code KVEventBatch} Tandem can read. */
public final class KvEventFormatException extends RuntimeException {
    public KvEventFormatException(String message) {
        super(message);
    }
}
