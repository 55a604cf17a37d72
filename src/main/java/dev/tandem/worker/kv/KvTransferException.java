package dev.tandem.worker.kv;

/**
 * A KV transfer that must not be used. Checked on purpose: the decode worker has to turn every one
 * of these into a failure reply (TOO_LARGE becomes "kv_too_large"), so the compiler makes it handle them.
 */
public final class KvTransferException extends Exception {

    public enum Reason {
        BAD_MAGIC,
        BAD_VERSION,
        BAD_DTYPE,
        /** The KV was computed by different weights than the receiver's. */
        MODEL_MISMATCH,
        LAYOUT_MISMATCH,
        /** Token or block counts that are impossible or inconsistent. */
        BAD_HEADER,
        /** Declared size is over the per-request KV limit; rejected before the body is buffered. */
        TOO_LARGE,
        /** More bytes arrived than the header declared. */
        OVERSIZED,
        /** The stream ended before the declared size. */
        TRUNCATED,
        /** CRC32C of the stream does not match its trailer. */
        CORRUPTED
    }

    private final Reason reason;

    public KvTransferException(Reason reason, String message) {
        super(reason + ": " + message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
