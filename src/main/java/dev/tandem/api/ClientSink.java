package dev.tandem.api;

import dev.tandem.router.GenerationFailure;
import dev.tandem.router.RequestRouter;
import dev.tandem.router.TokenSink;
import dev.tandem.router.Usage;

/**
 * One client request's end of the stream, whatever carries it — an SSE stream, a JSON answer, a
 * WebSocket, a bridge client. The lifecycle every transport shares lives here: exactly one ending —
 * finished, failed, refused, cancelled by the client, or abandoned because the client went away —
 * after which nothing more is written and the request's entries are {@link #released}; a cancel or an
 * abandon also stops the request on its workers. Subclasses only say how to write. Runs on the router's
 * event loop.
 */
public abstract class ClientSink implements TokenSink {
    private RequestRouter.Handle handle;
    private boolean ended;
    private int promptTokens;
    private int sentTokens;

    /** The request was submitted; {@code promptTokens} is for the usage a cancelled request reports. */
    public final void attach(RequestRouter.Handle handle, int promptTokens) {
        this.handle = handle;
        this.promptTokens = promptTokens;
    }

    public final boolean ended() {
        return ended;
    }

    @Override
    public final void onAccepted(long requestId, String prefillWorker, String decodeWorker) {
        if (!ended) {
            accepted(requestId, prefillWorker, decodeWorker);
        }
    }

    @Override
    public final void onRateLimits(java.util.Map<String, String> headers) {
        if (!ended && !headers.isEmpty()) {
            rateLimits(headers);
        }
    }

    @Override
    public final void onTokens(int[] tokenIds, String text) {
        if (ended || (tokenIds.length == 0 && text.isEmpty())) {
            return;
        }
        sentTokens += tokenIds.length;
        tokens(tokenIds, text);
    }

    @Override
    public final void onFinish(String finishReason, Usage usage) {
        if (end()) {
            finished(finishReason, usage);
        }
    }

    @Override
    public final void onError(GenerationFailure failure) {
        if (end()) {
            failed(failure);
        }
    }

    /** Refused before it reached the router (its fields are invalid). */
    public final void refuse(ApiException e) {
        if (end()) {
            refused(e);
        }
    }

    /** The client cancelled: it hears "cancelled" with the tokens it was sent, and the workers stop. */
    public final void cancel() {
        if (end()) {
            finished("cancelled", new Usage(promptTokens, sentTokens, handle == null ? 0 : handle.cachedTokens()));
            stopWorkers();
        }
    }

    /** Nobody reads any more (the connection closed, say): nothing is written, and the workers stop. */
    public final void abandon(String why) {
        if (end()) {
            abandoned(why);
            stopWorkers();
        }
    }

    private void stopWorkers() {
        if (handle != null) {
            handle.cancel();
        }
    }

    private boolean end() {
        if (ended) {
            return false;
        }
        ended = true;
        released();
        return true;
    }

    /** The request has an id and its workers. */
    protected void accepted(long requestId, String prefillWorker, String decodeWorker) {}

    /** The tenant's rate-limit headers; transports with response headers send them. */
    protected void rateLimits(java.util.Map<String, String> headers) {}

    /** Generated tokens and the text now complete; never both empty. */
    protected abstract void tokens(int[] tokenIds, String text);

    /** The last word of a request that finished (or that the client cancelled: {@code "cancelled"}). */
    protected abstract void finished(String finishReason, Usage usage);

    protected abstract void failed(GenerationFailure failure);

    /** A refusal before the router saw the request; by default told like any failure. */
    protected void refused(ApiException e) {
        failed(new GenerationFailure(e.status(), e.type(), e.code(), e.getMessage()));
    }

    /** The client is gone; {@code why} is for whatever still waits on an answer. */
    protected void abandoned(String why) {}

    /** Called once, at the ending, before its last word is written: drop the request's entries. */
    protected void released() {}
}
