package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.engine.PacedEngine;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.WorkerLoad;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** A client that drops its stream cancels the request: the decode batch, the KV and the router's load all go. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientDisconnectTest {
    private static final int MAX_TOKENS = 400;
    private TandemNode node;

    @BeforeAll
    void start() {
        // 10 ms a step: the 400-token answer would take 4 s if nobody cancelled it.
        node = TandemNode.start(
                TestNodes.config(), TandemNode.Plan.embedded(1, 1), new PacedEngine(ReferenceEngine.builtin(16), 10));
        TestNodes.awaitWorkers(node.router(), 1, 1);
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close().await();
        }
    }

    @Test
    void droppingTheStreamCancelsTheRequestOnEveryNode() throws Exception {
        long stepsBefore = node.decodeWorkers().get(0).steps();
        byte[] body = new JsonObject()
                .put("prompt", "a long answer nobody reads to the end")
                .put("max_tokens", MAX_TOKENS)
                .put("stream", true)
                .put("temperature", 0.9)
                .put("seed", 3)
                .encode()
                .getBytes(StandardCharsets.UTF_8);
        long dropped;
        try (Socket socket = new Socket("127.0.0.1", node.router().httpPort())) {
            socket.getOutputStream()
                    .write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().write(body);
            socket.getOutputStream().flush();
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            int events = 0;
            String line;
            while (events < 3 && (line = in.readLine()) != null) {
                if (line.startsWith("data: ")) {
                    events++;
                }
            }
            assertTrue(events == 3, "the stream started");
            dropped = System.nanoTime();
        }
        TestNodes.awaitTrue(
                () -> {
                    WorkerLoad decode = EmbeddedServingTest.status(node, "decode-1");
                    return node.router().requests().activeRequests() == 0
                            && node.router().requests().loads().total() == 0
                            && decode.activeSequences() == 0
                            && decode.kvBytesUsed() == 0
                            && decode.parkedKv() == 0;
                },
                Duration.ofSeconds(1),
                "the dropped stream to be cancelled on router and workers");
        long millis = (System.nanoTime() - dropped) / 1_000_000;
        long steps = node.decodeWorkers().get(0).steps() - stepsBefore;
        assertTrue(
                steps < MAX_TOKENS / 4,
                "decode stopped early (" + steps + " steps, freed " + millis + " ms after the drop)");
    }
}
