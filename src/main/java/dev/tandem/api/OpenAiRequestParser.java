package dev.tandem.api;

import dev.tandem.engine.tokenizer.ChatPrompt;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.ChatTemplateException;
import dev.tandem.protocol.Sampling;
import dev.tandem.router.GenerationRequest;
import dev.tandem.router.ServedModel;
import dev.tandem.router.ServedModels;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Validates OpenAI completions and chat bodies against the model they will run on — the one
 * {@code model} names, or the only one served — and tokenizes the prompt with that model's tokenizer. Unknown fields are ignored, as OpenAI does; fields that ask for something Tandem cannot
 * honour are refused by name rather than silently dropped.
 */
public final class OpenAiRequestParser {
    private static final int MAX_STOP_STRINGS = 4;
    /** Prompt text an event loop tokenizes itself: BPE of this much takes some tens of microseconds. */
    static final int EVENT_LOOP_TEXT_CHARS = 256;

    private static final List<String> COMPLETION_UNSUPPORTED =
            List.of("logit_bias", "logprobs", "suffix", "presence_penalty", "frequency_penalty", "tools", "functions");
    private static final List<String> CHAT_UNSUPPORTED = List.of(
            "tool_choice",
            "functions",
            "function_call",
            "logit_bias",
            "logprobs",
            "top_logprobs",
            "presence_penalty",
            "frequency_penalty",
            "audio",
            "prediction");

    private final ServedModels models;
    private final int defaultMaxTokens;

    public OpenAiRequestParser(ServedModels models, int defaultMaxTokens) {
        this.models = models;
        this.defaultMaxTokens = defaultMaxTokens;
    }

    /**
     * Parses {@code body} with {@code parse} on the calling event loop when that is cheap ({@link #cheap}),
     * else on a worker thread; either way the future completes on the caller's context.
     */
    public Future<CompletionCall> parse(Vertx vertx, JsonObject body, Callable<CompletionCall> parse) {
        if (!cheap(body)) {
            return vertx.executeBlocking(parse, false);
        }
        try {
            return Future.succeededFuture(parse.call());
        } catch (Exception e) {
            return Future.failedFuture(e);
        }
    }

    /**
     * Whether parsing {@code body} is cheap enough for an event loop: a prompt of token ids, or at most
     * {@link #EVENT_LOOP_TEXT_CHARS} characters of text for a tokenizer in this process. Long text (BPE is
     * model work), a tokenizer that asks a server and a chat for a model with its own Jinja template
     * (some hundred microseconds to render) go to a worker thread; for short prompts that round trip
     * between threads was a fifth of a zero-cost request's TTFT.
     */
    boolean cheap(JsonObject body) {
        Object messages = body.getValue("messages");
        Object prompt = body.getValue("prompt");
        if (messages == null && !(prompt instanceof String)) {
            return true; // token ids, or an error to report
        }
        if (TextLength.of(prompt, EVENT_LOOP_TEXT_CHARS) + TextLength.of(messages, EVENT_LOOP_TEXT_CHARS)
                > EVENT_LOOP_TEXT_CHARS) {
            return false;
        }
        ServedModel model = models.pick(body.getValue("model") instanceof String s ? s : null)
                .model();
        if (model != null && messages != null && model.chatTemplate().source() != null) {
            return false;
        }
        return model == null || model.tokenizer().encodesInProcess();
    }

    /**
     * A body on a channel that takes both kinds and always streams (the WebSocket, the event-bus
     * bridge): chat when it has {@code messages}, completions otherwise. {@code stream} defaults to
     * true there; it only matters to {@code stream_options}.
     */
    public CompletionCall parseStreaming(JsonObject body, String sessionHeader) {
        // Which kind the body is must not depend on a field the client may not have meant to send.
        if (body.getValue("prompt") != null && body.getValue("messages") != null) {
            throw ApiException.invalid(
                    "messages", "send either 'prompt' (a completion) or 'messages' (a chat), not both");
        }
        if (!body.containsKey("stream")) {
            body.put("stream", true);
        }
        return body.containsKey("messages") ? parseChat(body, sessionHeader) : parseCompletion(body, sessionHeader);
    }

    public CompletionCall parseCompletion(JsonObject body, String sessionHeader) {
        UnpairedSurrogates.refuseIn(body);
        refuseUnsupported(body, COMPLETION_UNSUPPORTED);
        if (RequestFields.integer(body, "best_of", 1, Long.MIN_VALUE, Long.MAX_VALUE) != 1) {
            throw unsupported("best_of", "'best_of' other than 1 is not supported");
        }
        if (RequestFields.bool(body, "echo", false)) {
            throw unsupported("echo", "'echo' is not supported");
        }
        ServedModel model = model(body);
        int[] prompt = prompt(model, body.getValue("prompt"));
        return common(
                model,
                body,
                prompt,
                RequestFields.optionalInteger(body, "max_tokens", 1, Integer.MAX_VALUE),
                "max_tokens",
                ApiKind.COMPLETION,
                sessionHeader);
    }

    public CompletionCall parseChat(JsonObject body, String sessionHeader) {
        UnpairedSurrogates.refuseIn(body);
        refuseUnsupported(body, CHAT_UNSUPPORTED);
        JsonObject format = RequestFields.object(body, "response_format");
        if (format != null && !"text".equals(format.getValue("type"))) {
            throw unsupported("response_format", "only response_format {\"type\": \"text\"} is supported");
        }
        JsonArray modalities = RequestFields.array(body, "modalities");
        if (modalities != null && !modalities.equals(new JsonArray().add("text"))) {
            throw unsupported("modalities", "only the \"text\" modality is supported");
        }
        ChatPrompt chat = ChatPrompts.parse(body);
        ServedModel model = model(body);
        ChatPrompts.refuseToolsFor(ChatTemplate.named(model.chatTemplate().name()) == model.chatTemplate(), chat);
        int[] prompt = encodeChat(model, chat);
        Long max = RequestFields.optionalInteger(body, "max_completion_tokens", 1, Integer.MAX_VALUE);
        String maxField = "max_completion_tokens";
        if (max == null) {
            max = RequestFields.optionalInteger(body, "max_tokens", 1, Integer.MAX_VALUE);
            maxField = "max_tokens";
        }
        return common(model, body, prompt, max, maxField, ApiKind.CHAT, sessionHeader);
    }

    /**
     * The chat's prompt: rendered by the model's template and tokenized, or tokenized by the upstream
     * server that applies its own. A template that refuses the chat (raise_exception) is a 400.
     */
    private int[] encodeChat(ServedModel model, ChatPrompt chat) {
        try {
            int[] onServer = model.chatTemplate().encodeOnServer(chat);
            if (onServer != null) {
                return onServer;
            }
            // A model's own template writes bos_token itself (HF and vLLM then tokenize without special tokens).
            boolean addBos = model.chatTemplate().source() == null;
            return encode(model, model.chatTemplate().render(chat), "messages", addBos);
        } catch (ChatTemplateException e) {
            throw ApiException.invalid("messages", e.getMessage());
        }
    }

    /** The model the body names, or the only one served; else the API error that says why there is none. */
    private ServedModel model(JsonObject body) {
        String requested = RequestFields.string(body, "model");
        if (requested != null && requested.isEmpty()) {
            throw ApiException.invalid("model", "'model' must not be empty");
        }
        ServedModels.Pick pick = models.pick(requested);
        if (pick.model() != null) {
            return pick.model();
        }
        throw switch (pick.miss()) {
            case REQUIRED ->
                new ApiException(400, "invalid_request_error", "model", "missing_required_parameter", pick.message());
            case NOT_FOUND ->
                new ApiException(404, "invalid_request_error", "model", "model_not_found", pick.message());
            case UNAVAILABLE -> new ApiException(503, "server_error", "model", "model_unavailable", pick.message());
        };
    }

    private CompletionCall common(
            ServedModel model,
            JsonObject body,
            int[] prompt,
            Long requestedMax,
            String maxField,
            ApiKind kind,
            String sessionHeader) {
        if (RequestFields.integer(body, "n", 1, Long.MIN_VALUE, Long.MAX_VALUE) != 1) {
            throw unsupported("n", "'n' other than 1 is not supported; send separate requests");
        }
        int seqLen = model.contextLength();
        String promptField = kind == ApiKind.CHAT ? "messages" : "prompt";
        if (prompt.length >= seqLen) {
            throw new ApiException(
                    400,
                    "invalid_request_error",
                    promptField,
                    "context_length_exceeded",
                    "The prompt has " + prompt.length + " tokens; this model's context is " + seqLen
                            + " tokens and at least one must be left to generate");
        }
        int maxTokens = maxTokens(requestedMax, maxField, seqLen - prompt.length);
        double temperature = RequestFields.number(body, "temperature", 1.0);
        if (temperature < 0 || temperature > 2) {
            throw ApiException.invalid("temperature", "'temperature' must be between 0 and 2, got " + temperature);
        }
        double topP = RequestFields.number(body, "top_p", 1.0);
        if (!(topP > 0 && topP <= 1)) {
            throw ApiException.invalid("top_p", "'top_p' must be in (0, 1], got " + topP);
        }
        // -1 (off) to the vocabulary size.
        long topK = RequestFields.integer(body, "top_k", -1, -1, model.vocabSize());
        long seed = body.getValue("seed") == null
                ? ThreadLocalRandom.current().nextLong()
                : RequestFields.integer(body, "seed", 0, Long.MIN_VALUE, Long.MAX_VALUE);
        boolean stream = RequestFields.bool(body, "stream", false);
        JsonObject streamOptions = RequestFields.object(body, "stream_options");
        boolean includeUsage = false;
        if (streamOptions != null) {
            if (!stream) {
                throw ApiException.invalid("stream_options", "'stream_options' is only allowed when 'stream' is true");
            }
            includeUsage = RequestFields.bool(streamOptions, "include_usage", false);
        }
        String user = RequestFields.string(body, "user");
        String session = sessionHeader != null && !sessionHeader.isBlank() ? sessionHeader : user;
        if (session != null && (session.isEmpty() || session.length() > 256)) {
            throw ApiException.invalid("user", "the session key must be 1 to 256 characters");
        }
        Sampling sampling = new Sampling(temperature, topP, (int) Math.max(0, topK), seed);
        GenerationRequest generation =
                new GenerationRequest(prompt, maxTokens, sampling, new int[0], stops(body), session, model);
        return new CompletionCall(generation, kind, stream, includeUsage, model.name());
    }

    private int[] prompt(ServedModel model, Object value) {
        if (value == null) {
            throw ApiException.invalid("prompt", "'prompt' is required");
        }
        if (value instanceof String text) {
            if (text.isEmpty()) {
                throw ApiException.invalid("prompt", "'prompt' must not be empty");
            }
            return encode(model, text, "prompt");
        }
        if (!(value instanceof JsonArray array)) {
            throw ApiException.invalidType("prompt", "a string or an array of token ids");
        }
        if (array.isEmpty()) {
            throw ApiException.invalid("prompt", "'prompt' must not be empty");
        }
        int vocab = model.vocabSize();
        int[] tokens = new int[array.size()];
        for (int i = 0; i < tokens.length; i++) {
            Object e = array.getValue(i);
            if (e instanceof String || e instanceof JsonArray) {
                throw unsupported(
                        "prompt", "batched prompts (an array of strings or of token arrays) are not supported");
            }
            java.math.BigInteger id = RequestFields.exactInteger(e);
            if (id == null) {
                throw ApiException.invalidType("prompt", "a string or an array of token ids");
            }
            if (id.signum() < 0 || id.compareTo(java.math.BigInteger.valueOf(vocab)) >= 0) {
                throw ApiException.invalid(
                        "prompt", "token id at index " + i + " is outside the vocabulary [0, " + vocab + ")");
            }
            tokens[i] = id.intValue();
        }
        return tokens;
    }

    /**
     * Tokenizes a prompt, refusing at once a text too long to fit the context whatever its tokens: no
     * token covers more than maxTokenBytes bytes, so a text of more than seqLen × that many bytes cannot
     * fit — and BPE merging of a huge text would cost seconds to learn it.
     */
    private int[] encode(ServedModel model, String text, String param) {
        return encode(model, text, param, true);
    }

    private int[] encode(ServedModel model, String text, String param, boolean addBos) {
        long bound = (long) model.contextLength() * model.tokenizer().maxTokenBytes();
        if (text.length() > bound || utf8Length(text) > bound) {
            throw new ApiException(
                    400,
                    "invalid_request_error",
                    param,
                    "context_length_exceeded",
                    "The prompt is longer than this model's context of " + model.contextLength() + " tokens");
        }
        return model.tokenizer().encode(text, addBos);
    }

    private static long utf8Length(String text) {
        long bytes = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
        }
        return bytes;
    }

    private static List<String> stops(JsonObject body) {
        Object value = body.getValue("stop");
        if (value == null) {
            return List.of();
        }
        List<String> stops = new ArrayList<>();
        if (value instanceof String s) {
            stops.add(s);
        } else if (value instanceof JsonArray array) {
            for (Object e : array) {
                if (!(e instanceof String s)) {
                    throw ApiException.invalidType("stop", "a string or an array of strings");
                }
                stops.add(s);
            }
        } else {
            throw ApiException.invalidType("stop", "a string or an array of strings");
        }
        if (stops.size() > MAX_STOP_STRINGS) {
            throw ApiException.invalid("stop", "at most " + MAX_STOP_STRINGS + " stop sequences are allowed");
        }
        if (stops.stream().anyMatch(String::isEmpty)) {
            throw ApiException.invalid("stop", "stop sequences must not be empty");
        }
        return List.copyOf(stops);
    }

    private int maxTokens(Long requested, String field, int left) {
        if (requested == null) {
            return Math.min(defaultMaxTokens, left);
        }
        if (requested > left) {
            throw new ApiException(
                    400,
                    "invalid_request_error",
                    field,
                    "context_length_exceeded",
                    "'" + field + "' is " + requested + " but only " + left
                            + " tokens of context are left after the prompt");
        }
        return requested.intValue();
    }

    private static void refuseUnsupported(JsonObject body, List<String> fields) {
        for (String field : fields) {
            if (RequestFields.asksFor(body.getValue(field))) {
                throw unsupported(field, "'" + field + "' is not supported by this server");
            }
        }
    }

    static ApiException unsupported(String param, String message) {
        return new ApiException(400, "invalid_request_error", param, "unsupported_parameter", message);
    }
}
