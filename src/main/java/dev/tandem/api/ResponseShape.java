package dev.tandem.api;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.tandem.router.Usage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The JSON objects one OpenAI endpoint answers with: the whole response, stream chunks, the last
 * chunk and the usage chunk. {@link #of} picks the completions or the chat shape.
 */
public abstract class ResponseShape {
    private final String id;
    private final String model;
    private final long created = System.currentTimeMillis() / 1000;

    private final String envelopePrefix;

    ResponseShape(String idPrefix, long requestId, String model) {
        this.id = idPrefix + Long.toUnsignedString(requestId, 36);
        this.model = model;
        this.envelopePrefix = envelopePrefix();
    }

    public static ResponseShape of(ApiKind kind, long requestId, String model) {
        return kind == ApiKind.CHAT ? new Chat(requestId, model) : new Completion(requestId, model);
    }

    public abstract JsonObject whole(String text, JsonArray tokenIds, String finishReason, Usage usage);

    /** A chunk carrying text; {@code first} is true for the stream's first chunk. */
    public abstract JsonObject delta(String text, JsonArray tokenIds, boolean first);

    public abstract JsonObject last(String finishReason);

    /**
     * {@link #delta} as the whole server-sent event ({@code data: …}, blank line), written straight into
     * text: the envelope is escaped once per stream and only the text per chunk — the per-token
     * JsonObject and its generic encoding were most of a router's CPU under streaming load.
     */
    public String deltaEvent(String text, int[] tokenIds, boolean first) {
        StringBuilder sb = new StringBuilder(envelopePrefix.length() + text.length() + tokenIds.length * 7 + 120)
                .append(envelopePrefix);
        openChoice(sb, text, first);
        sb.append(",\"token_ids\":[");
        for (int i = 0; i < tokenIds.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(tokenIds[i]);
        }
        return sb.append("],\"logprobs\":null,\"finish_reason\":null}]}\n\n").toString();
    }

    /** The choice of a delta chunk up to its text: {@code {"index":0,"text":…} or {@code …"delta":{…}}. */
    abstract void openChoice(StringBuilder sb, String text, boolean first);

    static void appendQuoted(StringBuilder sb, String text) {
        sb.append('"');
        JsonStringEncoder.getInstance().quoteAsString(text, sb);
        sb.append('"');
    }

    private String envelopePrefix() {
        StringBuilder sb = new StringBuilder("data: {\"id\":");
        appendQuoted(sb, id);
        sb.append(",\"object\":");
        appendQuoted(sb, chunkObject());
        sb.append(",\"created\":").append(created).append(",\"model\":");
        appendQuoted(sb, model);
        return sb.append(",\"choices\":[").toString();
    }

    /** The chunk {@code stream_options.include_usage} asks for: no choices, only usage. */
    public JsonObject usageChunk(Usage usage) {
        return envelope(chunkObject(), new JsonArray()).put("usage", usage(usage));
    }

    abstract String chunkObject();

    JsonObject envelope(String object, JsonArray choices) {
        return new JsonObject()
                .put("id", id)
                .put("object", object)
                .put("created", created)
                .put("model", model)
                .put("choices", choices);
    }

    static JsonObject usage(Usage usage) {
        return usage.toJson();
    }

    public static JsonArray ids(int[] tokens) {
        JsonArray array = new JsonArray();
        for (int t : tokens) {
            array.add(t);
        }
        return array;
    }

    /** {@code text_completion} objects of {@code /v1/completions}. */
    static final class Completion extends ResponseShape {
        Completion(long requestId, String model) {
            super("cmpl-", requestId, model);
        }

        private static JsonObject choice(String text, JsonArray tokenIds, String finishReason) {
            return new JsonObject()
                    .put("index", 0)
                    .put("text", text)
                    .put("token_ids", tokenIds)
                    .put("logprobs", null)
                    .put("finish_reason", finishReason);
        }

        @Override
        public JsonObject whole(String text, JsonArray tokenIds, String finishReason, Usage usage) {
            return envelope("text_completion", new JsonArray().add(choice(text, tokenIds, finishReason)))
                    .put("usage", usage(usage));
        }

        @Override
        public JsonObject delta(String text, JsonArray tokenIds, boolean first) {
            return envelope("text_completion", new JsonArray().add(choice(text, tokenIds, null)));
        }

        @Override
        public JsonObject last(String finishReason) {
            return envelope("text_completion", new JsonArray().add(choice("", new JsonArray(), finishReason)));
        }

        @Override
        String chunkObject() {
            return "text_completion";
        }

        @Override
        void openChoice(StringBuilder sb, String text, boolean first) {
            sb.append("{\"index\":0,\"text\":");
            appendQuoted(sb, text);
        }
    }

    /** {@code chat.completion} and {@code chat.completion.chunk} objects of {@code /v1/chat/completions}. */
    static final class Chat extends ResponseShape {
        Chat(long requestId, String model) {
            super("chatcmpl-", requestId, model);
        }

        @Override
        public JsonObject whole(String text, JsonArray tokenIds, String finishReason, Usage usage) {
            JsonObject message = new JsonObject()
                    .put("role", "assistant")
                    .put("content", text)
                    .put("refusal", null);
            JsonObject choice = new JsonObject()
                    .put("index", 0)
                    .put("message", message)
                    .put("token_ids", tokenIds)
                    .put("logprobs", null)
                    .put("finish_reason", finishReason);
            return envelope("chat.completion", new JsonArray().add(choice)).put("usage", usage(usage));
        }

        @Override
        public JsonObject delta(String text, JsonArray tokenIds, boolean first) {
            JsonObject delta = new JsonObject();
            if (first) {
                delta.put("role", "assistant");
            }
            delta.put("content", text);
            return envelope(
                    "chat.completion.chunk",
                    new JsonArray()
                            .add(new JsonObject()
                                    .put("index", 0)
                                    .put("delta", delta)
                                    .put("token_ids", tokenIds)
                                    .put("logprobs", null)
                                    .put("finish_reason", null)));
        }

        @Override
        public JsonObject last(String finishReason) {
            return envelope(
                    "chat.completion.chunk",
                    new JsonArray()
                            .add(new JsonObject()
                                    .put("index", 0)
                                    .put("delta", new JsonObject())
                                    .put("logprobs", null)
                                    .put("finish_reason", finishReason)));
        }

        @Override
        void openChoice(StringBuilder sb, String text, boolean first) {
            sb.append(
                    first
                            ? "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":"
                            : "{\"index\":0,\"delta\":{\"content\":");
            appendQuoted(sb, text);
            sb.append('}');
        }

        @Override
        String chunkObject() {
            return "chat.completion.chunk";
        }
    }
}
