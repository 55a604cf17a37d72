package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.protocol.TokenEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Tokens reach the sink exactly once and in order, whatever order and repetition events arrive in. */
class RequestStreamTest {
    private final List<Integer> tokens = new ArrayList<>();
    private final StringBuilder text = new StringBuilder();
    private final TokenSink sink = new TokenSink() {
        @Override
        public void onTokens(int[] ids, String fragment) {
            for (int id : ids) {
                tokens.add(id);
            }
            text.append(fragment);
        }

        @Override
        public void onFinish(String finishReason, Usage usage) {}

        @Override
        public void onError(GenerationFailure failure) {}
    };
    private final RequestStream stream = new RequestStream(ByteTokenizer.INSTANCE, 'x', List.of(), sink);

    private static TokenEvent ev(int seq, String chars, String finish) {
        return new TokenEvent(1, seq, chars.chars().toArray(), finish, null);
    }

    @Test
    void inOrderEventsAreDeliveredAsTheyCome() {
        assertFalse(stream.accept(ev(0, "ab", null)));
        assertFalse(stream.accept(ev(2, "c", null)));
        assertTrue(stream.accept(ev(3, "d", "length")));
        assertEquals("abcd", text.toString());
        assertEquals("length", stream.finishReason());
        assertEquals(4, stream.delivered());
    }

    @Test
    void anEarlyEventWaitsForTheGap() {
        assertFalse(stream.accept(ev(2, "c", null)));
        assertTrue(tokens.isEmpty());
        assertFalse(stream.accept(ev(0, "ab", null)));
        assertEquals("abc", text.toString());
    }

    @Test
    void repeatedTokensAreTrimmed() {
        stream.accept(ev(0, "abc", null));
        stream.accept(ev(1, "bcd", null));
        stream.accept(ev(2, "c", null));
        assertTrue(stream.accept(ev(3, "de", "stop")));
        assertEquals("abcde", text.toString());
        assertArrayEquals(
                "abcde".chars().toArray(),
                tokens.stream().mapToInt(Integer::intValue).toArray());
    }

    @Test
    void anErrorEndsTheStream() {
        stream.accept(ev(0, "a", null));
        assertTrue(stream.accept(new TokenEvent(1, 1, new int[0], null, "worker died")));
        assertEquals("worker died", stream.error());
    }

    @Test
    void aStopStringAcrossTokensEndsTheStreamWithoutIt() {
        RequestStream stopping = new RequestStream(ByteTokenizer.INSTANCE, 'x', List.of("END"), sink);
        assertFalse(stopping.accept(ev(0, "abE", null)));
        assertEquals("ab", text.toString(), "a possible stop start is held back");
        assertTrue(stopping.accept(ev(3, "NDxyz", null)));
        assertEquals("ab", text.toString() + stopping.flushText());
        assertEquals("stop", stopping.finishReason());
        assertTrue(stopping.stoppedByString());
        // Tokens up to the one that completed the stop string are counted; none after it.
        assertEquals(5, stopping.delivered());
    }

    @Test
    void aHeldBackPrefixThatNeverCompletesIsSentAtTheEnd() {
        RequestStream stopping = new RequestStream(ByteTokenizer.INSTANCE, 'x', List.of("END"), sink);
        assertTrue(stopping.accept(ev(0, "abEN", "length")));
        assertEquals("abEN", text.toString() + stopping.flushText());
        assertEquals("length", stopping.finishReason());
    }

    @Test
    void splitUtf8IsHeldBackUntilComplete() {
        byte[] euro = "€".getBytes(StandardCharsets.UTF_8);
        stream.accept(new TokenEvent(1, 0, new int[] {euro[0] & 0xff}, null, null));
        stream.accept(new TokenEvent(1, 1, new int[] {euro[1] & 0xff}, null, null));
        assertEquals("", text.toString());
        stream.accept(new TokenEvent(1, 2, new int[] {euro[2] & 0xff}, "length", null));
        assertEquals("€", text.toString());
    }
}
