package dev.tandem.router;

import dev.tandem.engine.tokenizer.TextStreamDecoder;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.protocol.TokenEvent;
import java.util.Arrays;
import java.util.TreeMap;

/**
 * One request's token stream as the router sees it: events are matched by sequence number, so a
 * token is delivered to the sink exactly once and in order — an early event waits for the gap to
 * fill, a repeated one (after a failover re-prefill) is trimmed. Text is decoded incrementally,
 * holding back incomplete UTF-8.
 */
final class RequestStream {
    private final TokenSink sink;
    private final TextStreamDecoder text;
    private final StopStringMatcher stops;
    private final TreeMap<Integer, TokenEvent> early = new TreeMap<>();
    private int delivered;
    /** The tokens delivered so far, kept so that a failover can re-prefill prompt + output. */
    private int[] deliveredTokens = new int[16];

    private String finishReason;
    private boolean stoppedByString;
    private String error;

    RequestStream(Tokenizer tokenizer, int lastPromptToken, java.util.List<String> stopStrings, TokenSink sink) {
        this.sink = sink;
        this.text = new TextStreamDecoder(tokenizer, lastPromptToken);
        this.stops = new StopStringMatcher(stopStrings);
    }

    /** Generated tokens delivered so far. */
    int delivered() {
        return delivered;
    }

    int[] deliveredTokens() {
        return Arrays.copyOf(deliveredTokens, delivered);
    }

    /** Applies an event; returns true once the stream has reached its end (finish or error). */
    boolean accept(TokenEvent event) {
        if (ended()) {
            return true;
        }
        if (event.seq() > delivered) {
            early.put(event.seq(), event);
            return false;
        }
        apply(event);
        while (!ended() && !early.isEmpty() && early.firstKey() <= delivered) {
            apply(early.pollFirstEntry().getValue());
        }
        return ended();
    }

    private void apply(TokenEvent event) {
        int skip = delivered - event.seq();
        int[] tokens = event.tokens();
        if (skip < tokens.length) {
            int[] fresh = skip == 0 ? tokens : Arrays.copyOfRange(tokens, skip, tokens.length);
            StringBuilder sb = new StringBuilder();
            int used = 0;
            // Token by token, so that a stop string ends the stream at the token that completed it.
            while (used < fresh.length && !stops.stopped()) {
                sb.append(stops.push(text.push(fresh[used++])));
            }
            int[] sent = used == fresh.length ? fresh : Arrays.copyOf(fresh, used);
            if (delivered + sent.length > deliveredTokens.length) {
                deliveredTokens =
                        Arrays.copyOf(deliveredTokens, Math.max(deliveredTokens.length * 2, delivered + sent.length));
            }
            System.arraycopy(sent, 0, deliveredTokens, delivered, sent.length);
            delivered += sent.length;
            sink.onTokens(sent, sb.toString());
            if (stops.stopped()) {
                finishReason = "stop";
                stoppedByString = true;
                return;
            }
        }
        if (event.error() != null) {
            error = event.error();
        } else if (event.finishReason() != null && event.seq() + tokens.length >= delivered) {
            finishReason = event.finishReason();
        }
    }

    boolean ended() {
        return finishReason != null || error != null;
    }

    String finishReason() {
        return finishReason;
    }

    String error() {
        return error;
    }

    /** True when a stop string ended the stream while the decode worker may still be generating. */
    boolean stoppedByString() {
        return stoppedByString;
    }

    /**
     * Text still held back — an incomplete UTF-8 tail (as U+FFFD) or the start of a stop string that
     * never completed — to send before the end. Empty after a stop string matched.
     */
    String flushText() {
        if (stoppedByString) {
            return "";
        }
        String tail = stops.push(text.flush());
        if (stops.stopped()) {
            finishReason = "stop";
            return tail;
        }
        return tail + stops.flush();
    }
}
