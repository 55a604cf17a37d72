package dev.tandem.bench.trace;

import java.util.Arrays;

/**
 * One request of a trace.
 *
 * @param arrivalMs when it arrives, in milliseconds after the trace's first request
 * @param inputLength prompt tokens
 * @param outputLength tokens to generate
 * @param hashIds Mooncake's block ids, one per {@value TraceTokens#TRACE_BLOCK_TOKENS} prompt tokens
 *     (the last block may be partial); empty when the trace has no prefix information (Azure)
 */
public record TraceRequest(long arrivalMs, int inputLength, int outputLength, long[] hashIds) {
    public TraceRequest {
        if (arrivalMs < 0 || inputLength <= 0 || outputLength <= 0) {
            throw new IllegalArgumentException("arrival " + arrivalMs + " ms, input " + inputLength + ", output "
                    + outputLength + ": the arrival must be >= 0 and the lengths > 0");
        }
        // TraceTokens derives every prompt token from a block id, so the ids must cover the prompt exactly.
        if (hashIds.length != 0 && hashIds.length != blocksFor(inputLength)) {
            throw new IllegalArgumentException(
                    hashIds.length + " hash ids for " + inputLength + " tokens, expected " + blocksFor(inputLength));
        }
        hashIds = hashIds.clone();
    }

    /** A request without prefix information. */
    public TraceRequest(long arrivalMs, int inputLength, int outputLength) {
        this(arrivalMs, inputLength, outputLength, new long[0]);
    }

    /** A copy: the record stays immutable. */
    @Override
    public long[] hashIds() {
        return hashIds.clone();
    }

    /** Whether the trace says which prompt blocks this request shares with others. */
    public boolean hasPrefix() {
        return hashIds.length > 0;
    }

    /** The trace blocks (full or partial) that {@code inputLength} tokens span. */
    static int blocksFor(int inputLength) {
        return (inputLength + TraceTokens.TRACE_BLOCK_TOKENS - 1) / TraceTokens.TRACE_BLOCK_TOKENS;
    }

    // Records compare arrays by reference; requests are values.
    @Override
    public boolean equals(Object o) {
        return o instanceof TraceRequest r
                && arrivalMs == r.arrivalMs
                && inputLength == r.inputLength
                && outputLength == r.outputLength
                && Arrays.equals(hashIds, r.hashIds);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * (31 * Long.hashCode(arrivalMs) + inputLength) + outputLength) + Arrays.hashCode(hashIds);
    }

    @Override
    public String toString() {
        return "TraceRequest[arrivalMs=" + arrivalMs + ", inputLength=" + inputLength + ", outputLength=" + outputLength
                + ", hashIds=" + Arrays.toString(hashIds) + "]";
    }
}
