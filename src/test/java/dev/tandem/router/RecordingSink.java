package dev.tandem.router;

import java.util.ArrayList;
import java.util.List;

/** A {@link TokenSink} that keeps what the client would have seen. */
final class RecordingSink implements TokenSink {
    long requestId = -1;
    String acceptedPrefill;
    String acceptedDecode;
    final List<Integer> tokens = new ArrayList<>();
    final StringBuilder text = new StringBuilder();
    String finishReason;
    Usage usage;
    GenerationFailure error;
    /** The quota's rate-limit headers, when a quota counted it. */
    java.util.Map<String, String> rateLimits = java.util.Map.of();

    /** Endings seen: exactly one of finish or error may ever come. */
    int endings;

    @Override
    public void onAccepted(long requestId, String prefillWorker, String decodeWorker) {
        this.requestId = requestId;
        this.acceptedPrefill = prefillWorker;
        this.acceptedDecode = decodeWorker;
    }

    @Override
    public void onRateLimits(java.util.Map<String, String> headers) {
        this.rateLimits = headers;
    }

    @Override
    public void onTokens(int[] tokenIds, String text) {
        for (int t : tokenIds) {
            tokens.add(t);
        }
        this.text.append(text);
    }

    @Override
    public void onFinish(String finishReason, Usage usage) {
        this.finishReason = finishReason;
        this.usage = usage;
        endings++;
    }

    @Override
    public void onError(GenerationFailure failure) {
        this.error = failure;
        endings++;
    }

    int[] tokenArray() {
        return tokens.stream().mapToInt(Integer::intValue).toArray();
    }

    /** "finish:<reason>", "error:<status> <code>" or "open". */
    String outcome() {
        return finishReason != null
                ? "finish:" + finishReason
                : error != null ? "error:" + error.status() + " " + error.code() : "open";
    }
}
