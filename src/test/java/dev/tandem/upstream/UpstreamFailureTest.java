package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An upstream that fails: each way ends with a clear answer, never a hang. With one prefill and one
 * decode worker there is no other pair to fail over to, so a worker failure ends the request: before
 * the first token with an HTTP error, after it with an error event closing the stream. A 400 from the
 * upstream is the client's and passes through. The upstream's deadline is 2 s; HTTP requests have 30 s.
 */
class UpstreamFailureTest extends UpstreamPairFixture {
    UpstreamFailureTest() {
        super(FakeUpstream.Kind.VLLM, "f");
    }

    @AfterEach
    void heal() {
        prefill.fault = FakeUpstream.Fault.NONE;
        decode.fault = FakeUpstream.Fault.NONE;
        // A failed worker is only avoided within its request: the next one may use the pair again.
        assertEquals(200, complete(false).statusCode(), "the pair serves again once its upstream does");
    }

    private HttpResponse<String> complete(boolean stream) {
        return cluster.http.post(
                "/v1/completions",
                new JsonObject()
                        .put("model", FakeUpstream.MODEL)
                        .put("prompt", "The capital of France:")
                        .put("max_tokens", 5)
                        .put("stream", stream)
                        .encode());
    }

    private static JsonObject error(HttpResponse<String> r) {
        return new JsonObject(r.body()).getJsonObject("error");
    }

    /** The error event a stream that had started carried, after its first token. */
    private static JsonObject streamError(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().endsWith("data: [DONE]\n\n"), r.body());
        JsonObject error = null;
        boolean token = false;
        for (String event : r.body().split("\n\n")) {
            String data = event.substring("data: ".length());
            if (data.equals("[DONE]")) {
                continue;
            }
            JsonObject chunk = new JsonObject(data);
            if (chunk.containsKey("error")) {
                error = chunk.getJsonObject("error");
            } else if (!chunk.getJsonArray("choices").isEmpty()) {
                token |= !chunk.getJsonArray("choices")
                        .getJsonObject(0)
                        .getString("text", "")
                        .isEmpty();
            }
        }
        assertTrue(token, "the first token was streamed before the failure: " + r.body());
        assertNotNull(error, "an error event: " + r.body());
        return error;
    }

    @Test
    void anUpstreamDownAtStartStopsTheWorkerFromStartingNamingIt() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String url = "http://127.0.0.1:" + port;
        IllegalStateException e = assertThrows(
                IllegalStateException.class, () -> cluster.worker(cluster.upstream(url, 2_000), "prefill-down", true));
        assertTrue(e.getMessage().contains(url) && e.getMessage().contains("/v1/models"), e.getMessage());
    }

    @Test
    void a400FromTheUpstreamIsTheClientsWithItsMessage() {
        prefill.fault = FakeUpstream.Fault.BAD_REQUEST;
        HttpResponse<String> r = complete(false);
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("invalid_request_error", error(r).getString("type"));
        assertTrue(error(r).getString("message").contains("maximum context length is 2048 tokens"), r.body());
        assertEquals(1, countAndClear(prefill), "a client's error is not retried");
    }

    @Test
    void a5xxFromTheUpstreamIsAWorkerFailure() {
        prefill.fault = FakeUpstream.Fault.SERVER_ERROR;
        HttpResponse<String> r = complete(false);
        // Retried elsewhere, and with no other prefill worker: 503, not the upstream's 500 passed on.
        assertEquals(503, r.statusCode(), r.body());
        assertEquals("no_prefill_workers", error(r).getString("code"));
        assertEquals(1, countAndClear(prefill), "tried once on this pair, then avoided");
    }

    @Test
    void anUpstreamSlowerThanItsDeadlineIsAWorkerFailure() {
        decode.fault = FakeUpstream.Fault.HANG;
        HttpResponse<String> r = complete(false);
        assertEquals(503, r.statusCode(), r.body());
        assertEquals("no_decode_workers", error(r).getString("code"));
    }

    @Test
    void anUpstreamThatGoesSilentMidStreamEndsTheStreamWithAnError() {
        decode.fault = FakeUpstream.Fault.STALL_MID_STREAM;
        streamError(complete(true));
    }

    @Test
    void anUpstreamDownMidStreamEndsTheStreamWithAnError() {
        decode.fault = FakeUpstream.Fault.DIE_MID_STREAM;
        streamError(complete(true));
    }

    @Test
    void malformedSseEndsTheStreamWithAnError() {
        decode.fault = FakeUpstream.Fault.MALFORMED_SSE;
        JsonObject error = streamError(complete(true));
        assertNotNull(error.getString("message"));
    }

    @Test
    void aClientThatGoesAwayClosesTheUpstreamStream() throws Exception {
        decode.fault = FakeUpstream.Fault.TRICKLE;
        int before = decode.closedEarly.get();
        HttpRequest request = cluster.http
                .request("/v1/completions")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(new JsonObject()
                        .put("model", FakeUpstream.MODEL)
                        .put("prompt", "The capital of France:")
                        .put("max_tokens", 5)
                        .put("stream", true)
                        .encode()))
                .build();
        HttpResponse<InputStream> r =
                java.net.http.HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = r.body()) {
            assertTrue(body.read() >= 0, "the stream started");
        }
        // The fake keeps the stream alive with comments, so only the client's going away can close it.
        TestNodes.awaitTrue(
                () -> decode.closedEarly.get() > before,
                Duration.ofSeconds(20),
                "the decode instance to see its stream closed");
    }

    private static int countAndClear(FakeUpstream f) {
        int n = f.received.size();
        f.received.clear();
        return n;
    }
}
