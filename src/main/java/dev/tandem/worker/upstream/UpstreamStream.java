package dev.tandem.worker.upstream;

import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.TokenEvent;
import dev.tandem.upstream.UpstreamClient;
import dev.tandem.upstream.UpstreamException;
import dev.tandem.upstream.UpstreamFlow;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * One request's decode stream from an upstream, relayed as token events numbered from the first token
 * the router does not have yet. Ends exactly once: finished (a finish reason, or {@code [DONE]} with
 * none: "stop"), failed (an error event, so the router fails over) or cancelled (nothing sent). Runs on
 * the decode worker's event loop.
 */
final class UpstreamStream {
    private final DecodeRequest request;
    private final UpstreamFlow flow;
    private final BiConsumer<String, TokenEvent> send;
    private final Consumer<UpstreamStream> onEnd;
    private final UpstreamClient.Cancel cancel = new UpstreamClient.Cancel();
    /** The next event's sequence number: 0 when the upstream makes the first token, else 1. */
    private int seq;

    private int seen;
    private boolean cancelled;
    private boolean finished;
    private boolean ended;

    UpstreamStream(
            DecodeRequest request,
            UpstreamFlow flow,
            BiConsumer<String, TokenEvent> send,
            Consumer<UpstreamStream> onEnd) {
        this.request = request;
        this.flow = flow;
        this.send = send;
        this.onEnd = onEnd;
        this.seq = request.firstToken() < 0 ? 0 : 1;
    }

    DecodeRequest request() {
        return request;
    }

    boolean cancelled() {
        return cancelled;
    }

    /** Completes once the upstream answered the stream's headers 2xx; fails with its refusal otherwise. */
    Future<Void> open(UpstreamClient client, String path, JsonObject body) {
        return client.stream(path, body, cancel, this::onEvent)
                .onFailure(e -> {
                    // Refused before it started: the DECODE_REQUEST's answer says why, no event.
                    ended = true;
                    onEnd.accept(this);
                })
                .map(stream -> {
                    stream.ended().onComplete(ar -> end(ar.failed() ? ar.cause() : null));
                    return null;
                });
    }

    void cancel() {
        cancelled = true;
        cancel.cancel();
        end(null);
    }

    private void onEvent(JsonObject event) {
        if (ended || finished) {
            return;
        }
        UpstreamFlow.Chunk chunk = flow.chunk(event, seen);
        seen += chunk.tokens().length;
        String reason = chunk.finishReason();
        if ("abort".equals(reason)) {
            throw new UpstreamException(0, "the upstream aborted the request");
        }
        if (chunk.tokens().length == 0 && reason == null) {
            return;
        }
        send.accept(request.routerId(), new TokenEvent(request.requestId(), seq, chunk.tokens(), reason, null));
        seq += chunk.tokens().length;
        finished = reason != null;
    }

    /** The stream's one end; {@code failure} null is a clean end (or a cancel). */
    private void end(Throwable failure) {
        if (ended) {
            return;
        }
        ended = true;
        onEnd.accept(this);
        if (cancelled || finished) {
            return;
        }
        if (failure != null) {
            String why = failure instanceof UpstreamException ? failure.getMessage() : failure.toString();
            send.accept(request.routerId(), new TokenEvent(request.requestId(), seq, new int[0], null, why));
        } else {
            send.accept(request.routerId(), new TokenEvent(request.requestId(), seq, new int[0], "stop", null));
        }
    }
}
