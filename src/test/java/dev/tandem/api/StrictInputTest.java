package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.HttpTestClient;
import dev.tandem.RawHttp;
import dev.tandem.TestNodes;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Input that was accepted loosely before: integers out of range were clamped, bodies of other media types,
 * encodings or charsets were read as JSON, and HTTP framing errors got no JSON body (issue 17).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StrictInputTest {
    private TandemNode node;
    private HttpTestClient http;
    private int port;

    @BeforeAll
    void start() {
        node = TestNodes.startEmbedded(TestNodes.config(), 1, 1);
        port = node.router().httpPort();
        http = new HttpTestClient(port);
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    /** Every integer field, each just outside its range and far outside it: 400 naming the field. */
    static Stream<Arguments> integersOutOfRange() {
        return Stream.of(
                Arguments.of("/v1/completions", "max_tokens", "9223372036854775808"),
                Arguments.of("/v1/completions", "max_tokens", "-1e308"),
                Arguments.of("/v1/completions", "max_tokens", "-1.5e19"),
                Arguments.of("/v1/completions", "max_tokens", "1e308"),
                Arguments.of("/v1/completions", "max_tokens", "-9223372036854775808"),
                Arguments.of("/v1/completions", "max_tokens", "0"),
                Arguments.of("/v1/completions", "max_tokens", "2147483648"),
                Arguments.of("/v1/completions", "seed", "18446744073709551616"),
                Arguments.of("/v1/completions", "seed", "9223372036854775808"),
                Arguments.of("/v1/completions", "seed", "-9223372036854775809"),
                Arguments.of("/v1/completions", "seed", "1e308"),
                Arguments.of("/v1/completions", "seed", "-1e19"),
                Arguments.of("/v1/completions", "seed", "1e400"),
                Arguments.of("/v1/completions", "top_k", "18446744073709551616"),
                Arguments.of("/v1/completions", "top_k", "259"),
                Arguments.of("/v1/completions", "top_k", "-2"),
                Arguments.of("/v1/completions", "top_k", "1e20"),
                Arguments.of("/v1/completions", "n", "18446744073709551617"),
                Arguments.of("/v1/completions", "n", "1e308"),
                Arguments.of("/v1/completions", "best_of", "18446744073709551617"),
                Arguments.of("/v1/completions", "prompt", "[18446744073709551616]"),
                Arguments.of("/v1/completions", "prompt", "[1e308]"),
                Arguments.of("/v1/completions", "prompt", "[-1e308]"),
                Arguments.of("/v1/chat/completions", "max_completion_tokens", "9223372036854775808"),
                Arguments.of("/v1/chat/completions", "max_completion_tokens", "-1.5e19"),
                Arguments.of("/v1/chat/completions", "max_tokens", "1e308"),
                Arguments.of("/v1/chat/completions", "seed", "18446744073709551616"),
                Arguments.of("/v1/chat/completions", "top_k", "18446744073709551616"),
                Arguments.of("/v1/chat/completions", "n", "-1e308"));
    }

    @ParameterizedTest(name = "{0} {1}: {2} → 400")
    @MethodSource("integersOutOfRange")
    void anIntegerOutsideItsRangeIsRefusedNamingTheField(String path, String field, String value) {
        String base = path.endsWith("chat/completions")
                ? "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]"
                : field.equals("prompt") ? "{\"max_tokens\": 2" : "{\"prompt\": \"hi\"";
        HttpResponse<String> r = http.post(path, base + ", \"" + field + "\": " + value + "}");
        JsonObject error = error(r, 400);
        assertEquals(field, error.getString("param"), r.body());
    }

    /** Exact integers, however written, are still accepted. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("integersInRange")
    void anExactIntegerInRangeIsAccepted(String body) {
        HttpResponse<String> r = http.post("/v1/completions", body);
        assertEquals(200, r.statusCode(), r.body());
    }

    static Stream<String> integersInRange() {
        return Stream.of(
                "{\"prompt\": \"hi\", \"max_tokens\": 2.0, \"seed\": 9223372036854775807}",
                "{\"prompt\": \"hi\", \"max_tokens\": 2e0, \"seed\": -9223372036854775808}",
                "{\"prompt\": \"hi\", \"max_tokens\": 1, \"seed\": -9.223372036854775808e18, \"top_k\": 258}",
                "{\"prompt\": [256, 1e1], \"max_tokens\": 1, \"top_k\": -1, \"n\": 1.0}");
    }

    @Test
    void twoSeedsPastTheLongRangeNoLongerCollapseIntoOneAccepted() {
        // Before: 2^64 behaved as seed 0 and 1e308 as Long.MAX_VALUE; both are refused now.
        error(http.post("/v1/completions", "{\"prompt\": \"hi\", \"seed\": 18446744073709551616}"), 400);
        error(http.post("/v1/completions", "{\"prompt\": \"hi\", \"seed\": 1e308}"), 400);
    }

    static Stream<Arguments> mediaTypes() {
        return Stream.of(
                Arguments.of(null, null, 415, "unsupported_media_type"),
                Arguments.of("application/jsonx", null, 415, "unsupported_media_type"),
                Arguments.of("application/json; charset=utf-16", null, 415, "unsupported_media_type"),
                Arguments.of("application/json;charset=latin1", null, 415, "unsupported_media_type"),
                Arguments.of("application/json; boundary=x", null, 415, "unsupported_media_type"),
                Arguments.of("text/json", null, 415, "unsupported_media_type"),
                Arguments.of("application/json", "br", 415, "unsupported_content_encoding"),
                Arguments.of("application/json", "gzip", 415, "unsupported_content_encoding"),
                Arguments.of("application/json", "deflate, gzip", 415, "unsupported_content_encoding"),
                Arguments.of("application/json", null, 200, null),
                Arguments.of("application/json; charset=utf-8", null, 200, null),
                Arguments.of("Application/JSON; Charset=\"UTF-8\"", null, 200, null),
                Arguments.of("application/json", "identity", 200, null));
    }

    @ParameterizedTest(name = "Content-Type {0}, Content-Encoding {1} → {2}")
    @MethodSource("mediaTypes")
    void onlyUnencodedUtf8JsonIsRead(String contentType, String encoding, int status, String code) {
        HttpRequest.Builder b = http.request("/v1/completions")
                .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\": \"hi\", \"max_tokens\": 1}"));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        if (encoding != null) {
            b.header("Content-Encoding", encoding);
        }
        HttpResponse<String> r = http.send(b.build());
        if (status == 200) {
            assertEquals(200, r.statusCode(), r.body());
        } else {
            assertEquals(code, error(r, status).getString("code"), r.body());
        }
    }

    @Test
    void aUtf16BodyIsNotGuessedAt() {
        byte[] utf16 = "{\"prompt\": \"hi\", \"max_tokens\": 1}".getBytes(StandardCharsets.UTF_16LE);
        HttpResponse<String> r = http.send(http.request("/v1/completions")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(utf16))
                .build());
        assertEquals("invalid_json", error(r, 400).getString("code"), r.body());
        byte[] bom = "\ufeff{\"prompt\": \"hi\"}".getBytes(StandardCharsets.UTF_16);
        HttpResponse<String> withBom = http.send(http.request("/v1/completions")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(bom))
                .build());
        assertEquals("invalid_json", error(withBom, 400).getString("code"), withBom.body());
    }

    @Test
    void malformedUtf8IsRefusedNotReplaced() {
        byte[] body = {'{', '"', 'p', 'r', 'o', 'm', 'p', 't', '"', ':', '"', (byte) 0xc3, '(', '"', '}'};
        HttpResponse<String> r = http.send(http.request("/v1/completions")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build());
        assertEquals("invalid_json", error(r, 400).getString("code"), r.body());
    }

    static Stream<Arguments> brokenHttp() {
        String head = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
        return Stream.of(
                Arguments.of("a bad chunk size", head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400),
                Arguments.of("Content-Length -1", head + "Content-Length: -1\r\n\r\n{}", 400),
                Arguments.of("a 20-digit Content-Length", head + "Content-Length: 99999999999999999999\r\n\r\n{}", 400),
                Arguments.of(
                        "a NUL in Content-Type",
                        "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/\u0000json\r\n"
                                + "Content-Length: 2\r\n\r\n{}",
                        400),
                Arguments.of(
                        "a request line over 4 KiB", "GET /" + "a".repeat(5000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414),
                Arguments.of(
                        "headers over 8 KiB",
                        "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "b".repeat(9000) + "\r\n\r\n",
                        431));
    }

    @ParameterizedTest(name = "{0} → {2} with a JSON body")
    @MethodSource("brokenHttp")
    void anHttpProtocolErrorIsAnsweredInTheOpenAiShape(String name, String request, int status) throws Exception {
        RawHttp.Response r = RawHttp.exchangeThenAwaitClose(port, request);
        assertEquals(status, r.status(), r.head() + "\n" + r.body());
        assertTrue(r.header("Content-Type").startsWith("application/json"), r.head());
        JsonObject error = r.json().getJsonObject("error");
        assertNotNull(error, r.body());
        assertEquals("invalid_request_error", error.getString("type"));
        assertTrue(r.closed(), "the connection is closed after a framing error");
        // And the server goes on serving.
        assertEquals(
                200,
                http.post("/v1/completions", "{\"prompt\": \"ok\", \"max_tokens\": 1}")
                        .statusCode());
    }

    private static JsonObject error(HttpResponse<String> r, int status) {
        assertEquals(status, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), r.body());
        JsonObject error = new JsonObject(r.body()).getJsonObject("error");
        assertNotNull(error, r.body());
        assertNotNull(error.getString("message"), r.body());
        return error;
    }
}
