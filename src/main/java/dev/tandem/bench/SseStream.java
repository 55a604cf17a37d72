package dev.tandem.bench;

import dev.tandem.bench.trace.TraceRequest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;

/**
 * Reads one completion's server-sent events as they arrive: when the first token came, the gaps
 * between chunks of tokens, and the usage at the end (prompt, completion and cached tokens). Events
 * may be split across or packed into network buffers, so bytes are kept until a blank line ends one.
 * Completions carry their text in {@code choices[0].text}, chat completions in {@code
 * choices[0].delta.content}; both count.
 */
final class SseStream {
    private final long sentNanos;
    /** The generated text, kept only when asked for (a chat session resends it); else null. */
    private final StringBuilder text;

    private final StringBuilder pending = new StringBuilder();
    private double firstTokenMs = Double.NaN;
    private long lastChunkNanos;
    private double[] gaps = new double[64];
    private int gapCount;
    private int promptTokens = -1;
    private int completionTokens;
    private int cachedTokens;
    private boolean done;
    private String error;

    SseStream(long sentNanos) {
        this(sentNanos, false);
    }

    /** With {@code keepText} every chunk is parsed in full and its text kept ({@link #text()}). */
    SseStream(long sentNanos, boolean keepText) {
        this.sentNanos = sentNanos;
        this.text = keepText ? new StringBuilder() : null;
    }

    /** Chunks with text so far: the first token's and one per gap after it. */
    int textChunks() {
        return Double.isNaN(firstTokenMs) ? 0 : gapCount + 1;
    }

    /** Send to the first chunk with text, in ms; NaN before it. */
    double firstTokenMs() {
        return firstTokenMs;
    }

    /** The text generated so far, or null when the stream was not asked to keep it. */
    String text() {
        return text == null ? null : text.toString();
    }

    void feed(Buffer bytes) {
        long now = System.nanoTime();
        pending.append(bytes.toString(StandardCharsets.UTF_8));
        int end;
        while ((end = pending.indexOf("\n\n")) >= 0) {
            String event = pending.substring(0, end);
            pending.delete(0, end + 2);
            onEvent(event, now);
        }
    }

    private void onEvent(String event, long now) {
        for (String line : event.split("\n")) {
            if (!line.startsWith("data:")) {
                continue;
            }
            String data = line.substring(5).trim();
            if (data.equals("[DONE]")) {
                done = true;
                continue;
            }
            if (onTokenChunk(data, now)) {
                continue;
            }
            try {
                onData(new JsonObject(data), now);
            } catch (DecodeException | ClassCastException e) {
                error = "malformed event: " + data;
            }
        }
    }

    /**
     * The common case without parsing: a plain token chunk (a non-empty {@code text}, no usage, no error)
     * only moves the clocks. Parsing each one as JSON made the client the bottleneck of a load bench on a
     * small machine. Anything else — usage, errors, empty or odd chunks — is parsed in full.
     */
    private boolean onTokenChunk(String data, long now) {
        if (text != null) {
            return false;
        }
        int field = data.indexOf("\"text\":\"");
        int valueAt = field + 8;
        if (field < 0) {
            field = data.indexOf("\"content\":\"");
            valueAt = field + 11;
        }
        if (field < 0
                || data.startsWith("\"", valueAt)
                || data.contains("\"usage\"")
                || data.contains("\"error\"")
                || !data.startsWith("{")
                || !data.endsWith("}")) {
            return false;
        }
        tokenChunk(now);
        return true;
    }

    private void tokenChunk(long now) {
        if (Double.isNaN(firstTokenMs)) {
            firstTokenMs = (now - sentNanos) / 1e6;
        } else {
            gap((now - lastChunkNanos) / 1e6);
        }
        lastChunkNanos = now;
    }

    private void onData(JsonObject chunk, long now) {
        if (chunk.containsKey("error")) {
            JsonObject e = chunk.getJsonObject("error");
            error = "stream error: " + (e == null ? chunk.encode() : e.getString("message"));
            return;
        }
        JsonArray choices = chunk.getJsonArray("choices");
        if (choices != null && !choices.isEmpty()) {
            JsonObject choice = choices.getJsonObject(0);
            JsonObject delta = choice.getJsonObject("delta");
            String chunkText = delta != null ? delta.getString("content", "") : choice.getString("text", "");
            if (chunkText != null && !chunkText.isEmpty()) {
                tokenChunk(now);
                if (text != null) {
                    text.append(chunkText);
                }
            }
        }
        JsonObject usage = chunk.getJsonObject("usage");
        if (usage != null) {
            promptTokens = usage.getInteger("prompt_tokens", -1);
            completionTokens = usage.getInteger("completion_tokens", 0);
            JsonObject details = usage.getJsonObject("prompt_tokens_details");
            cachedTokens = details == null ? 0 : details.getInteger("cached_tokens", 0);
        }
    }

    private void gap(double ms) {
        if (gapCount == gaps.length) {
            gaps = java.util.Arrays.copyOf(gaps, gaps.length * 2);
        }
        gaps[gapCount++] = ms;
    }

    RequestResult result(int index, TraceRequest r, String prefillWorker, String decodeWorker) {
        double e2e = (System.nanoTime() - sentNanos) / 1e6;
        String why = error != null
                ? error
                : !done ? "the stream ended without [DONE]" : promptTokens < 0 ? "no usage in the stream" : null;
        if (why != null) {
            return RequestResult.failed(index, r.arrivalMs(), r.inputLength(), e2e, why);
        }
        return new RequestResult(
                index,
                r.arrivalMs(),
                promptTokens,
                cachedTokens,
                completionTokens,
                firstTokenMs,
                java.util.Arrays.copyOf(gaps, gapCount),
                e2e,
                prefillWorker,
                decodeWorker,
                null);
    }
}
