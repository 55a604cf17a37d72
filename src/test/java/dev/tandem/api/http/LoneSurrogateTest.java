package dev.tandem.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.HttpTestClient;
import dev.tandem.TestNodes;
import dev.tandem.node.TandemNode;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A JSON escape of a lone UTF-16 surrogate ({@code "\ud800"}) is valid JSON but no text: UTF-8 cannot encode
 * it, so an id echoed back came out as "?", and a prompt was tokenized as "?". Every client-chosen string is
 * refused with a 400 naming its field, on the WebSocket and over HTTP alike; a surrogate pair is text.
 * The messages are written as JSON text with the escapes in it, as a client would send them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LoneSurrogateTest {
    private TandemNode node;
    private int port;

    @BeforeAll
    void start() {
        node = TestNodes.startEmbedded(TestNodes.config(), 1, 1);
        port = node.router().httpPort();
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    private static void assertRefused(JsonObject frame, Object id, String param) {
        assertEquals("error", frame.getString("type"), frame.encode());
        assertEquals(400, frame.getInteger("status"), frame.encode());
        assertEquals(id, frame.getValue("id"), frame.encode());
        assertEquals(param, frame.getJsonObject("error").getString("param"), frame.encode());
        assertEquals("invalid_value", frame.getJsonObject("error").getString("code"), frame.encode());
    }

    @Test
    void aWebSocketIdHoldingALoneSurrogateIsRefusedNamingId() throws Exception {
        try (WebSocketTestClient ws = WebSocketTestClient.connect(port)) {
            ws.send("{\"id\": \"\\ud800\", \"prompt\": \"hello\", \"max_tokens\": 1}");
            assertRefused(ws.next(), null, "id");
            ws.send("{\"id\": \"x\\udfff\", \"type\": \"cancel\"}");
            assertRefused(ws.next(), null, "id");
        }
    }

    @Test
    void aWebSocketIdOfASurrogatePairIsEchoedIntact() throws Exception {
        try (WebSocketTestClient ws = WebSocketTestClient.connect(port)) {
            ws.send("{\"id\": \"\\ud83d\\ude00\", \"prompt\": \"hello\", \"max_tokens\": 1}");
            String id = "\ud83d\ude00";
            JsonObject last = ws.collect(Set.of(id)).get(id).last();
            assertEquals("done", last.getString("type"), last.encode());
            assertEquals(id, last.getString("id"));
        }
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "prompt   | \"prompt\": \"a\\ud800b\"",
                "user     | \"prompt\": \"hi\", \"user\": \"\\udc00\"",
                "stop     | \"prompt\": \"hi\", \"stop\": [\"ok\", \"\\ud800\"]",
                "model    | \"prompt\": \"hi\", \"model\": \"tandem-builtin\\ud800\"",
                "messages | \"messages\": [{\"role\": \"user\", \"content\": \"\\ud800\"}]",
                "messages | \"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"\\udbff\"}]}]"
            })
    void aFieldHoldingALoneSurrogateIsRefusedNamingIt(String param, String fields) throws Exception {
        try (WebSocketTestClient ws = WebSocketTestClient.connect(port)) {
            ws.send("{\"id\": 7, \"max_tokens\": 1, " + fields + "}");
            assertRefused(ws.next(), 7, param);
        }
        String path = fields.contains("\"messages\"") ? "/v1/chat/completions" : "/v1/completions";
        HttpResponse<String> r = new HttpTestClient(port).post(path, "{\"max_tokens\": 1, " + fields + "}");
        assertEquals(400, r.statusCode(), r.body());
        JsonObject error = new JsonObject(r.body()).getJsonObject("error");
        assertEquals(param, error.getString("param"), r.body());
    }
}
