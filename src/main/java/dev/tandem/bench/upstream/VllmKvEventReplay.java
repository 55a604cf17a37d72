package dev.tandem.bench.upstream;

import java.nio.ByteBuffer;
import org.zeromq.ZFrame;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The answer of vLLM's KV event replay endpoint (a ROUTER): a request {@code [identity, empty, start seq]}
 * gets {@code [identity, empty, seq, payload]} for every buffered batch from {@code start} on, then seq
 * -1 with an empty payload. Shared by the sim instances' publisher and the tests' fake engines.
 */
public final class VllmKvEventReplay {
    private VllmKvEventReplay() {}

    /**
     * Answers {@code request} from {@code buffer}, whose first batch has sequence number {@code firstSeq};
     * a request not of that shape gets no answer (false).
     */
    public static boolean answer(ZMQ.Socket replay, ZMsg request, long firstSeq, Iterable<byte[]> buffer) {
        ZFrame[] frames = request.toArray(new ZFrame[0]);
        if (frames.length != 3 || frames[2].size() != 8) {
            return false;
        }
        byte[] identity = frames[0].getData();
        long start = ByteBuffer.wrap(frames[2].getData()).getLong();
        long s = firstSeq;
        for (byte[] payload : buffer) {
            if (s >= start) {
                send(replay, identity, s, payload);
            }
            s++;
        }
        send(replay, identity, -1, new byte[0]);
        return true;
    }

    private static void send(ZMQ.Socket replay, byte[] identity, long seq, byte[] payload) {
        replay.sendMore(identity);
        replay.sendMore(new byte[0]);
        replay.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
        replay.send(payload);
    }
}
