package dev.tandem.router;

/**
 * Where one request's output goes (an SSE stream, a JSON response, a WebSocket, a bridge client).
 * Called on the router's event loop, in order; exactly one of {@link #onFinish} or {@link #onError}
 * ends the stream.
 */
public interface TokenSink {

    /** The request has an id and its workers; nothing has been computed yet. */
    default void onAccepted(long requestId, String prefillWorker, String decodeWorker) {}

    /** The tenant's quota after this request was counted: OpenAI's {@code x-ratelimit-*} headers, before any output. */
    default void onRateLimits(java.util.Map<String, String> headers) {}

    /** Generated tokens in order, and the text that is now complete (may be empty while UTF-8 is incomplete). */
    void onTokens(int[] tokenIds, String text);

    void onFinish(String finishReason, Usage usage);

    void onError(GenerationFailure failure);
}
