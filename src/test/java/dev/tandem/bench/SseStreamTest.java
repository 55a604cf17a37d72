package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.bench.trace.TraceRequest;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SseStreamTest {
    private static final TraceRequest REQUEST = new TraceRequest(0, 20, 3);
    private static final String TOKEN = "data: {\"choices\":[{\"index\":0,\"text\":\"ab\"}]}\n\n";
    private static final String LAST =
            "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}]}\n\n";
    private static final String USAGE = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":3,"
            + "\"prompt_tokens_details\":{\"cached_tokens\":16}}}\n\n";
    private static final String DONE = "data: [DONE]\n\n";

    static List<Arguments> streams() {
        String whole = TOKEN + TOKEN + TOKEN + LAST + USAGE + DONE;
        return List.of(
                Arguments.of("one buffer", List.of(whole), null, 2),
                Arguments.of(
                        "split mid-event",
                        List.of(whole.substring(0, 7), whole.substring(7, 50), whole.substring(50)),
                        null,
                        2),
                Arguments.of(
                        "byte by byte",
                        whole.chars().mapToObj(c -> String.valueOf((char) c)).toList(),
                        null,
                        2),
                Arguments.of("no [DONE]", List.of(TOKEN + USAGE), "the stream ended without [DONE]", 0),
                Arguments.of("no usage", List.of(TOKEN + LAST + DONE), "no usage in the stream", 0),
                Arguments.of(
                        "error event",
                        List.of(TOKEN
                                + "data: {\"error\":{\"message\":\"worker failed\",\"type\":\"server_error\"}}\n\n"
                                + DONE),
                        "stream error: worker failed",
                        0),
                Arguments.of(
                        "garbage", List.of("data: {not json\n\n" + USAGE + DONE), "malformed event: {not json", 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streams")
    void readsTokensGapsAndUsageHoweverTheEventsArePacked(String name, List<String> parts, String error, int gaps) {
        SseStream stream = new SseStream(System.nanoTime());
        parts.forEach(p -> stream.feed(Buffer.buffer(p)));
        RequestResult r = stream.result(7, REQUEST, "prefill-1", "decode-2");
        assertEquals(error, r.error());
        if (error == null) {
            assertEquals(20, r.promptTokens());
            assertEquals(16, r.cachedTokens());
            assertEquals(3, r.completionTokens());
            assertTrue(r.ttftMs() >= 0);
            assertEquals(gaps, r.itlMs().length, "a gap between each two chunks of tokens");
            assertEquals("decode-2", r.decodeWorker());
        } else {
            assertNull(r.decodeWorker());
        }
        assertEquals(7, r.index());
    }

    private static final String CHAT_ROLE =
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";

    private static String chat(String content) {
        return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"}}]}\n\n";
    }

    /** Chat chunks carry text in delta.content; the opening role chunk and empty deltas are no token. */
    @ParameterizedTest(name = "keep text: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void chatDeltasCountAsTokensAndTheTextIsKeptWhenAsked(boolean keepText) {
        SseStream stream = new SseStream(System.nanoTime(), keepText);
        stream.feed(Buffer.buffer(CHAT_ROLE + chat("")));
        assertEquals(0, stream.textChunks());
        assertTrue(Double.isNaN(stream.firstTokenMs()));
        stream.feed(Buffer.buffer(chat("Hel") + chat("lo")));
        assertEquals(2, stream.textChunks());
        assertTrue(stream.firstTokenMs() >= 0);
        stream.feed(Buffer.buffer(USAGE + DONE));
        RequestResult r = stream.result(1, REQUEST, null, null);
        assertNull(r.error());
        assertEquals(1, r.itlMs().length);
        assertEquals(keepText ? "Hello" : null, stream.text());
    }
}
