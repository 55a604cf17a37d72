package dev.tandem.bench;

import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;

/** Where the soak's target answers: host and port of its HTTP API, and the API key its calls carry, if any. */
record SoakEndpoint(String host, int port, String apiKey) {

    /** {@code http://host:port}, with or without a trailing slash; nothing else (no path, no https). */
    static SoakEndpoint of(URI url, String apiKey) {
        if (!"http".equals(url.getScheme()) || url.getHost() == null) {
            throw new IllegalArgumentException("--target must be an http://host:port URL, got " + url);
        }
        if (url.getPath() != null && !url.getPath().isEmpty() && !url.getPath().equals("/")) {
            throw new IllegalArgumentException("--target takes no path (the bench adds /v1/...), got " + url);
        }
        return new SoakEndpoint(url.getHost(), url.getPort() < 0 ? 80 : url.getPort(), apiKey);
    }

    String baseUrl() {
        return "http://" + host + ":" + port;
    }

    RequestOptions options(HttpMethod method, String uri) {
        RequestOptions options = new RequestOptions()
                .setMethod(method)
                .setHost(host)
                .setPort(port)
                .setURI(uri);
        if (!apiKey.isEmpty()) {
            options.putHeader("Authorization", "Bearer " + apiKey);
        }
        return options;
    }

    WebSocketConnectOptions webSocket() {
        WebSocketConnectOptions options =
                new WebSocketConnectOptions().setHost(host).setPort(port).setURI("/v1/stream");
        if (!apiKey.isEmpty()) {
            options.putHeader("Authorization", "Bearer " + apiKey);
        }
        return options;
    }

    /** A blocking GET for the bench's own thread (models, metrics): not on the traffic's event loop. */
    HttpRequest get(String uri) {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(baseUrl() + uri)).timeout(Duration.ofSeconds(10));
        if (!apiKey.isEmpty()) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        return b.GET().build();
    }
}
