package dev.tandem.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Framing whatever way the bytes arrive: split anywhere, many frames at once, over the limit, unframed. */
class BridgeFrameReaderTest {
    private static final int MAX = 16;
    private final List<String> events = new ArrayList<>();
    private final BridgeFrameReader reader = new BridgeFrameReader(MAX, new BridgeFrameReader.Listener() {
        @Override
        public void onFrame(Buffer payload) {
            events.add("frame " + payload.toString(StandardCharsets.UTF_8));
        }

        @Override
        public void onOversized(long length) {
            events.add("oversized " + length);
        }

        @Override
        public void onUnframed(int length) {
            events.add("unframed " + length);
        }
    });

    private static Buffer frame(String payload) {
        byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
        return Buffer.buffer().appendInt(bytes.length).appendBytes(bytes);
    }

    @Test
    void framesSplitAtEveryByteComeOutWhole() {
        Buffer stream = frame("{\"a\":1}").appendBuffer(frame("")).appendBuffer(frame("[2]"));
        for (int i = 0; i < stream.length(); i++) {
            reader.handle(stream.getBuffer(i, i + 1));
        }
        assertEquals(List.of("frame {\"a\":1}", "frame ", "frame [2]"), events);
    }

    @Test
    void manyFramesInOneReadComeOutInOrder() {
        reader.handle(frame("one")
                .appendBuffer(frame("two"))
                .appendBuffer(frame("three"))
                .appendBuffer(frame("fo")));
        reader.handle(Buffer.buffer());
        assertEquals(List.of("frame one", "frame two", "frame three", "frame fo"), events);
    }

    @Test
    void anOversizedFrameIsSkippedAndTheNextOneRead() {
        String big = "x".repeat(MAX + 1);
        Buffer stream = frame(big).appendBuffer(frame("after"));
        // Skipped whether its payload arrives with the header, in pieces, or with the next frame.
        reader.handle(stream.getBuffer(0, 6));
        reader.handle(stream.getBuffer(6, 15));
        reader.handle(stream.getBuffer(15, stream.length()));
        reader.handle(frame(big));
        reader.handle(frame("last"));
        assertEquals(List.of("oversized 17", "frame after", "oversized 17", "frame last"), events);
    }

    @Test
    void aFrameOfExactlyTheLimitIsRead() {
        reader.handle(frame("y".repeat(MAX)));
        assertEquals(List.of("frame " + "y".repeat(MAX)), events);
    }

    @Test
    void aNegativeLengthEndsReading() {
        reader.handle(frame("ok").appendInt(-5).appendBuffer(frame("never")));
        reader.handle(frame("nor this"));
        assertEquals(List.of("frame ok", "unframed -5"), events);
    }
}
