package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A streamed chunk written straight as text ({@link ResponseShape#deltaEvent}) is one SSE event whose
 * JSON is exactly the chunk object ({@link ResponseShape#delta}), for both endpoints, the first chunk and
 * later ones, and texts that need escaping.
 */
class DeltaEventTest {

    static Stream<Arguments> cases() {
        String[] texts = {"", "Once", " upon \"a\" time\\", "tab\tnew\nline\r\u0000\u001f", "Ünïcödé ☃ 🎉", "</script>"
        };
        Stream.Builder<Arguments> out = Stream.builder();
        for (ApiKind kind : ApiKind.values()) {
            for (String text : texts) {
                for (boolean first : new boolean[] {true, false}) {
                    out.add(Arguments.of(kind, text, first));
                }
            }
        }
        return out.build();
    }

    @ParameterizedTest(name = "{0} first={2} text={1}")
    @MethodSource("cases")
    void theTextEventIsTheChunkObject(ApiKind kind, String text, boolean first) {
        ResponseShape shape = ResponseShape.of(kind, 123456789L, "model \"q\"");
        int[] ids = text.isEmpty() ? new int[0] : new int[] {1, 258, 31999};
        String event = shape.deltaEvent(text, ids, first);
        assertTrue(event.startsWith("data: ") && event.endsWith("\n\n"), event);
        assertEquals(1, event.split("\n\n", -1).length - 1, "one event");
        JsonObject parsed = new JsonObject(event.substring("data: ".length(), event.length() - 2));
        assertEquals(shape.delta(text, ResponseShape.ids(ids), first), parsed);
    }
}
