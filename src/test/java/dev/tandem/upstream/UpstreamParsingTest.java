package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.engine.tokenizer.TokenizerIdentity;
import dev.tandem.engine.tokenizer.TokenizerImages;
import dev.tandem.engine.tokenizer.UpstreamTokenizer;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the upstream says, read right: Prometheus load, SSE in pieces, stream chunks, error bodies, the tokenizer image. */
class UpstreamParsingTest {

    @Test
    void vllmAndSglangMetricsBecomeOneLoad() {
        String vllm = "# HELP vllm:num_requests_running Number of requests.\n"
                + "# TYPE vllm:num_requests_running gauge\n"
                + "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n"
                + "vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 2.0\n"
                + "vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 7.0 1764720000000\n"
                + "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n"
                + "vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.5\n"
                + "vllm:prompt_tokens_total{model_name=\"m\"} 1e6\n";
        assertEquals(new UpstreamLoad(5, 7, 0.5), UpstreamLoad.parse(vllm));
        String sglang = "sglang:num_running_reqs{model_name=\"m\",tp_rank=\"0\"} 4.0\n"
                + "sglang:num_queue_reqs{model_name=\"m\",tp_rank=\"0\"} 1.0\n"
                + "sglang:token_usage{model_name=\"m\",tp_rank=\"0\"} 0.75\n";
        assertEquals(new UpstreamLoad(4, 1, 0.75), UpstreamLoad.parse(sglang));
        assertEquals(UpstreamLoad.IDLE, UpstreamLoad.parse("garbage{\nvllm:num_requests_running NaN\n"));
    }

    @Test
    void sseEventsAreReadWholeWhateverTheirPieces() {
        List<JsonObject> events = new ArrayList<>();
        SseEvents sse = new SseEvents(events::add);
        byte[] bytes = (": ping\n\ndata: {\"a\":1}\r\n\r\ndata: {\"b\":\"é\"}\n\ndata: [DONE]\n\n")
                .getBytes(StandardCharsets.UTF_8);
        for (byte b : bytes) {
            sse.push(Buffer.buffer(new byte[] {b}));
        }
        assertEquals(List.of(new JsonObject().put("a", 1), new JsonObject().put("b", "é")), events);
        assertTrue(sse.done());
        SseEvents broken = new SseEvents(e -> {});
        assertThrows(UpstreamException.class, () -> broken.push(Buffer.buffer("data: {\"choices\": [\n\n")));
        assertThrows(UpstreamException.class, () -> new SseEvents(e -> {}).push(Buffer.buffer("<html>\n")));
    }

    @Test
    void vllmChunksCarryTokenIdsAndSglangOutputIdsAreCountedOnce() {
        VllmFlow vllm = new VllmFlow();
        JsonObject chunk = new JsonObject()
                .put(
                        "choices",
                        new JsonArray()
                                .add(new JsonObject()
                                        .put("text", " Paris")
                                        .put("finish_reason", "length")
                                        .put("token_ids", new JsonArray().add(5).add(6))));
        UpstreamFlow.Chunk c = vllm.chunk(chunk, 0);
        assertArrayEquals(new int[] {5, 6}, c.tokens());
        assertEquals("length", c.finishReason());
        assertEquals(
                0,
                vllm.chunk(new JsonObject().put("choices", new JsonArray()), 2).tokens().length);
        JsonObject noIds = new JsonObject().put("choices", new JsonArray().add(new JsonObject().put("text", "x")));
        assertThrows(UpstreamException.class, () -> vllm.chunk(noIds, 0));

        SglangFlow sglang = new SglangFlow("10.0.0.1", 8998);
        JsonObject cumulative = new JsonObject()
                .put("output_ids", new JsonArray().add(1).add(2).add(3))
                .put("meta_info", new JsonObject().put("completion_tokens", 3).putNull("finish_reason"));
        assertArrayEquals(new int[] {3}, sglang.chunk(cumulative, 2).tokens());
        JsonObject incremental = new JsonObject()
                .put("output_ids", new JsonArray().add(4))
                .put(
                        "meta_info",
                        new JsonObject()
                                .put("completion_tokens", 4)
                                .put("finish_reason", new JsonObject().put("type", "length")));
        UpstreamFlow.Chunk last = sglang.chunk(incremental, 3);
        assertArrayEquals(new int[] {4}, last.tokens());
        assertEquals("length", last.finishReason());
        assertNull(sglang.chunk(cumulative, 2).finishReason());
    }

    @Test
    void errorBodiesOfEitherShapeGiveTheirMessage() {
        assertEquals(
                "too long",
                UpstreamClient.errorMessage(
                        400, Buffer.buffer("{\"object\":\"error\",\"message\":\"too long\",\"code\":400}")));
        assertEquals(
                "bad",
                UpstreamClient.errorMessage(
                        400, Buffer.buffer("{\"error\":{\"message\":\"bad\",\"type\":\"BadRequestError\"}}")));
        assertEquals("Internal Server Error", UpstreamClient.errorMessage(500, Buffer.buffer("Internal Server Error")));
        assertEquals("the upstream answered HTTP 502", UpstreamClient.errorMessage(502, Buffer.buffer("")));
    }

    @Test
    void anUpstreamTokenizerTravelsAsAnImageAndKeepsItsIdentity() throws Exception {
        byte[][] pieces = {new byte[0], "a".getBytes(StandardCharsets.UTF_8), " the".getBytes(StandardCharsets.UTF_8)};
        UpstreamTokenizer t = new UpstreamTokenizer("http://10.0.0.5:8000", "m", pieces, 0);
        Tokenizer back = TokenizerImages.read(TokenizerImages.of(t));
        assertEquals(TokenizerIdentity.of(t), TokenizerIdentity.of(back));
        assertEquals("http://10.0.0.5:8000", ((UpstreamTokenizer) back).baseUrl());
        assertArrayEquals(" the".getBytes(StandardCharsets.UTF_8), back.decode(1, 2));
        assertEquals(4, back.maxTokenBytes());
    }
}
