package dev.tandem;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A small blocking/async HTTP client for tests, on the JDK's HttpClient (a client independent of Vert.x). */
public final class HttpTestClient {
    private final HttpClient client;
    private final String base;

    public HttpTestClient(int port) {
        this.client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        this.base = "http://127.0.0.1:" + port;
    }

    /** Over TLS with {@code tls} ({@link TestTls#clientContext}); HTTP/2 when the server offers it by ALPN. */
    public HttpTestClient(int port, javax.net.ssl.SSLContext tls) {
        this.client = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .sslContext(tls)
                .build();
        this.base = "https://127.0.0.1:" + port;
    }

    public HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
    }

    public HttpResponse<String> post(String path, String body) {
        return send(request(path)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    public HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError("request failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    public CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest request) {
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    public CompletableFuture<HttpResponse<String>> postAsync(String path, String body) {
        return client.sendAsync(
                request(path)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The ids {@code GET /v1/models} lists, sorted; anything but 200 is an assertion error. */
    public java.util.List<String> modelIds() {
        HttpResponse<String> r = send(request("/v1/models").GET().build());
        if (r.statusCode() != 200) {
            throw new AssertionError("GET /v1/models: " + r.statusCode() + " " + r.body());
        }
        return new io.vertx.core.json.JsonObject(r.body())
                .getJsonArray("data").stream()
                        .map(m -> ((io.vertx.core.json.JsonObject) m).getString("id"))
                        .sorted()
                        .toList();
    }

    /** The token ids of the first choice of a non-streamed completion. */
    public static int[] tokenIds(HttpResponse<String> response) {
        JsonArray ids = new JsonObject(response.body())
                .getJsonArray("choices")
                .getJsonObject(0)
                .getJsonArray("token_ids");
        int[] out = new int[ids.size()];
        for (int k = 0; k < out.length; k++) {
            out[k] = ids.getInteger(k);
        }
        return out;
    }

    /** A parsed SSE completion: the data payloads in order, the token ids and text they carried. */
    public record SseResult(List<String> payloads, int[] tokenIds, String text, String finishReason, int doneCount) {}

    public static SseResult parseSse(String body) {
        List<String> payloads = new ArrayList<>();
        List<Integer> ids = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        String finish = null;
        int done = 0;
        for (String event : body.split("\n\n")) {
            if (event.isBlank()) {
                continue;
            }
            if (!event.startsWith("data: ")) {
                throw new AssertionError("not an SSE data event: " + event);
            }
            String data = event.substring("data: ".length());
            payloads.add(data);
            if (data.equals("[DONE]")) {
                done++;
                continue;
            }
            JsonObject chunk = new JsonObject(data);
            if (chunk.containsKey("error")) {
                throw new AssertionError("stream carried an error: " + data);
            }
            JsonObject choice = chunk.getJsonArray("choices").getJsonObject(0);
            text.append(choice.getString("text"));
            JsonArray tokenIds = choice.getJsonArray("token_ids");
            for (int i = 0; i < tokenIds.size(); i++) {
                ids.add(tokenIds.getInteger(i));
            }
            if (choice.getString("finish_reason") != null) {
                finish = choice.getString("finish_reason");
            }
        }
        return new SseResult(
                payloads, ids.stream().mapToInt(Integer::intValue).toArray(), text.toString(), finish, done);
    }
}
