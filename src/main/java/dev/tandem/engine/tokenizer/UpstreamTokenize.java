package dev.tandem.engine.tokenizer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One upstream's {@code POST /tokenize} ({@code {"model", "prompt", "add_special_tokens"}} →
 * {@code {"tokens": [...], "count", "max_model_len"}}: vLLM and SGLang answer alike). Blocking.
 */
public final class UpstreamTokenize {
    private static final JsonFactory JSON = new JsonFactory();
    /** Writes chat requests (thread-safe once built; one per JVM, not one per request). */
    private static final ObjectMapper WRITER = new ObjectMapper();

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(5))
            .version(HttpClient.Version.HTTP_1_1)
            .build();

    private final URI uri;

    UpstreamTokenize(String baseUrl) {
        this.uri = URI.create(baseUrl + "/tokenize");
    }

    int[] encode(String model, String text, boolean addSpecialTokens) {
        return post(body(model, text, addSpecialTokens));
    }

    /** vLLM's TokenizeChatRequest: the model plus {@link UpstreamChatTemplate#request}'s fields. */
    int[] encodeChat(String model, Map<String, Object> request) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", model);
        body.putAll(request);
        try {
            return post(WRITER.writeValueAsString(body));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private int[] post(String requestBody) {
        HttpResponse<String> response;
        try {
            response = HTTP.send(
                    HttpRequest.newBuilder(uri)
                            .timeout(Duration.ofSeconds(30))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(requestBody))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException("the upstream's /tokenize at " + uri + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while tokenizing", e);
        }
        if (response.statusCode() / 100 != 2) {
            throw new UncheckedIOException(new IOException("the upstream's /tokenize at " + uri + " answered "
                    + response.statusCode() + ": " + response.body()));
        }
        return tokens(response.body());
    }

    private static String body(String model, String text, boolean addSpecialTokens) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("model", model);
            g.writeStringField("prompt", text);
            g.writeBooleanField("add_special_tokens", addSpecialTokens);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** The {@code tokens} array of a /tokenize answer. */
    public static int[] tokens(String body) {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if ("tokens".equals(field) && value == JsonToken.START_ARRAY) {
                    int[] ids = new int[16];
                    int n = 0;
                    while (p.nextToken() == JsonToken.VALUE_NUMBER_INT) {
                        if (n == ids.length) {
                            ids = Arrays.copyOf(ids, n * 2);
                        }
                        ids[n++] = p.getIntValue();
                    }
                    return Arrays.copyOf(ids, n);
                }
                p.skipChildren();
            }
            throw new IOException("no 'tokens' array");
        } catch (IOException e) {
            throw new UncheckedIOException(new IOException("malformed /tokenize answer: " + e.getMessage(), e));
        }
    }
}
