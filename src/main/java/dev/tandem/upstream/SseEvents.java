package dev.tandem.upstream;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Server-sent events as vLLM and SGLang stream them: {@code data: {json}} lines separated by blank
 * lines, ended by {@code data: [DONE]}. Bytes arrive in arbitrary pieces; a line is read once whole.
 * Anything but a JSON object or {@code [DONE]} after {@code data:} is an {@link UpstreamException}.
 */
final class SseEvents {
    private final Consumer<JsonObject> onEvent;
    private Buffer pending = Buffer.buffer();
    private boolean done;

    SseEvents(Consumer<JsonObject> onEvent) {
        this.onEvent = onEvent;
    }

    /** True once {@code [DONE]} was read. */
    boolean done() {
        return done;
    }

    void push(Buffer bytes) {
        pending.appendBuffer(bytes);
        int start = 0;
        for (int i = 0; i < pending.length(); i++) {
            if (pending.getByte(i) == '\n') {
                line(pending.getString(start, i, StandardCharsets.UTF_8.name()));
                start = i + 1;
                if (done) {
                    break;
                }
            }
        }
        pending = pending.getBuffer(start, pending.length());
    }

    private void line(String raw) {
        String line = raw.endsWith("\r") ? raw.substring(0, raw.length() - 1) : raw;
        if (done || line.isEmpty() || line.startsWith(":")) {
            return; // blank separator or an SSE comment (keep-alive)
        }
        if (!line.startsWith("data:")) {
            if (line.startsWith("event:") || line.startsWith("id:") || line.startsWith("retry:")) {
                return;
            }
            throw new UpstreamException(0, "malformed SSE from the upstream: " + abbreviate(line));
        }
        String data = line.substring(5).trim();
        if ("[DONE]".equals(data)) {
            done = true;
            return;
        }
        JsonObject event;
        try {
            event = new JsonObject(data);
        } catch (DecodeException | ClassCastException e) {
            throw new UpstreamException(0, "malformed SSE data from the upstream: " + abbreviate(data));
        }
        onEvent.accept(event);
    }

    private static String abbreviate(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "…" : s;
    }
}
