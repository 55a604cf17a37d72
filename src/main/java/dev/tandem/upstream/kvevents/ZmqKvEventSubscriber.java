package dev.tandem.upstream.kvevents;

import dev.tandem.config.KvEventsSettings;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZFrame;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * Follows a GPU engine's KV event stream: a ZeroMQ SUB socket on the engine's publisher, messages
 * {@code [topic, 8-byte big-endian sequence number, msgpack KVEventBatch]}, decoded in order. A gap in
 * the sequence is filled from the engine's replay endpoint (a DEALER sends the first missing number; the
 * engine answers {@code [seq, payload]} frames, then seq -1); when it cannot be filled, when the sequence
 * starts over (the engine restarted) or the connection drops, the listener is told to reset — what it
 * knew may be wrong — and following starts again from the next message. A subscriber that starts after
 * the engine asks for everything the replay buffer still holds. Runs on its own thread: the listener is
 * called there.
 */
public final class ZmqKvEventSubscriber implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ZmqKvEventSubscriber.class.getName());
    private static final AtomicInteger MONITORS = new AtomicInteger();

    /** How long one replay request waits for each answer before it is sent again. */
    static final int REPLAY_ATTEMPT_TIMEOUT_MS = 1_000;
    /** Requests sent for one replay before the gap counts as unfillable. */
    static final int REPLAY_ATTEMPTS = 5;
    /** How often, and for how long after connecting, the buffer is asked again while nothing arrived. */
    static final long CATCH_UP_INTERVAL_MS = 250;

    static final long CATCH_UP_WINDOW_MS = 5_000;

    /** What the stream says, in order. */
    public interface Listener {
        void onBatch(EngineKvBatch batch);

        /** Forget everything: the stream has a hole, restarted, or was cut. */
        void onReset(String why);
    }

    private final KvEventsSettings settings;
    private final String name;
    private final Listener listener;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long batches;
    private volatile long gaps;
    private volatile long resets;
    private volatile boolean connected;
    private long last = -1;
    private long nextCatchUp;
    private long catchUpEnd;

    public ZmqKvEventSubscriber(KvEventsSettings settings, String name, Listener listener) {
        this.settings = settings;
        this.name = name;
        this.listener = listener;
        this.thread = new Thread(this::run, "tandem-kv-events-" + name);
        thread.setDaemon(true);
    }

    public ZmqKvEventSubscriber start() {
        thread.start();
        return this;
    }

    /**
     * Stops following: the thread ends within a poll (100 ms) or a replay's timeout and closes its
     * sockets. Does not wait, so an event loop may call it; no listener call starts after the thread ends.
     */
    @Override
    public void close() {
        running = false;
    }

    /** Waits up to {@code millis} for the thread to end (tests). */
    boolean awaitStopped(long millis) throws InterruptedException {
        thread.join(millis);
        return !thread.isAlive();
    }

    /** Batches applied so far, replayed ones included. */
    public long batches() {
        return batches;
    }

    /** Whether the engine's publisher is connected now. */
    public boolean connected() {
        return connected;
    }

    /** Gaps in the sequence seen so far. */
    public long gaps() {
        return gaps;
    }

    /** Resets so far (unfillable gaps, restarts, lost connections, unreadable messages). */
    public long resets() {
        return resets;
    }

    private void run() {
        try (ZContext ctx = new ZContext()) {
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.setLinger(0);
            sub.subscribe(settings.topic().getBytes(StandardCharsets.UTF_8));
            String monitorAddress = "inproc://tandem-kv-monitor-" + MONITORS.incrementAndGet();
            sub.monitor(monitorAddress, ZMQ.EVENT_CONNECTED | ZMQ.EVENT_DISCONNECTED);
            ZMQ.Socket monitor = ctx.createSocket(SocketType.PAIR);
            monitor.connect(monitorAddress);
            sub.connect(settings.endpoint());
            ZMQ.Poller poller = ctx.createPoller(2);
            poller.register(sub, ZMQ.Poller.POLLIN);
            poller.register(monitor, ZMQ.Poller.POLLIN);
            while (running && !Thread.currentThread().isInterrupted()) {
                catchUp(ctx);
                if (poller.poll(100) <= 0) {
                    continue;
                }
                if (poller.pollin(1)) {
                    onConnection(ZMQ.Event.recv(monitor, ZMQ.DONTWAIT), ctx);
                }
                if (poller.pollin(0)) {
                    receive(ZMsg.recvMsg(sub, ZMQ.DONTWAIT), ctx);
                }
            }
        } catch (RuntimeException e) {
            if (running) {
                LOG.log(Level.WARNING, "KV event subscriber " + name + " stopped: " + e, e);
                listener.onReset("the subscriber stopped: " + e.getMessage());
            }
        }
    }

    /**
     * Connected: ask for what the engine's buffer holds (what it published before, or while the
     * subscription was on its way, which PUB/SUB drops). Disconnected: what follows may have a hole.
     */
    private void onConnection(ZMQ.Event event, ZContext ctx) {
        if (event == null) {
            return;
        }
        if (event.getEvent() == ZMQ.EVENT_CONNECTED) {
            connected = true;
            long now = System.currentTimeMillis();
            nextCatchUp = now + CATCH_UP_INTERVAL_MS;
            catchUpEnd = now + CATCH_UP_WINDOW_MS;
            if (last < 0) {
                replay(ctx, 0, Long.MAX_VALUE);
            }
        } else if (event.getEvent() == ZMQ.EVENT_DISCONNECTED) {
            connected = false;
            if (last >= 0) {
                reset("the connection to " + settings.endpoint() + " dropped");
            }
        }
    }

    /**
     * The connection is up before the subscription reaches the publisher, and PUB drops what it sends
     * in between. When that was the only batch (an engine that then goes quiet), no later sequence number
     * shows the hole, so for a few seconds after connecting, while nothing has arrived, the buffer is
     * asked again.
     */
    private void catchUp(ZContext ctx) {
        long now = System.currentTimeMillis();
        if (connected && last < 0 && now >= nextCatchUp && now < catchUpEnd) {
            nextCatchUp = now + CATCH_UP_INTERVAL_MS;
            replay(ctx, 0, Long.MAX_VALUE);
        }
    }

    private void receive(ZMsg msg, ZContext ctx) {
        if (msg == null) {
            return;
        }
        ZFrame[] frames = msg.toArray(new ZFrame[0]);
        if (frames.length != 3 || frames[1].size() != 8) {
            if (last >= 0) {
                reset("a message of " + msg.size() + " frames is no [topic, seq, payload]");
            }
            return;
        }
        long seq = ByteBuffer.wrap(frames[1].getData()).getLong();
        byte[] payload = frames[2].getData();
        if (last >= 0 && seq <= last) {
            if (seq > 0 || last == 0) {
                // Already had it, from a replay; a restarted engine drops the connection first.
                return;
            }
            reset("the sequence started over after " + last + " (the engine restarted)");
        }
        if (last < 0 && seq > 0) {
            replay(ctx, 0, seq);
        } else if (last >= 0 && seq > last + 1) {
            gaps++;
            if (!replay(ctx, last + 1, seq)) {
                reset("batches " + (last + 1) + " to " + (seq - 1) + " were lost and could not be replayed");
            }
        }
        deliver(seq, payload);
    }

    /**
     * Asks the replay endpoint for batches {@code from} to {@code upTo - 1} and applies those that follow
     * on from {@code last}; true when every one of them arrived. A request that goes unanswered is sent
     * again on a new socket, from where the answers stopped: under load a request on a fresh connection
     * was seen to vanish (about one in thirty on a busy 2-core machine), and a replay is idempotent.
     */
    private boolean replay(ZContext ctx, long from, long upTo) {
        if (settings.replayEndpoint().isBlank()) {
            return false;
        }
        for (int attempt = 0; attempt < REPLAY_ATTEMPTS && running; attempt++) {
            long start = last < 0 ? from : last + 1;
            Answer answer = replayOnce(ctx, start, upTo);
            if (answer != Answer.SILENT) {
                return answer == Answer.COMPLETE && (upTo == Long.MAX_VALUE || last == upTo - 1);
            }
        }
        return false;
    }

    private enum Answer {
        COMPLETE,
        BROKEN,
        SILENT
    }

    private Answer replayOnce(ZContext ctx, long from, long upTo) {
        ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
        try {
            dealer.setLinger(0);
            dealer.setReceiveTimeOut(REPLAY_ATTEMPT_TIMEOUT_MS);
            dealer.connect(settings.replayEndpoint());
            dealer.sendMore(new byte[0]);
            dealer.send(ByteBuffer.allocate(8).putLong(from).array());
            while (running) {
                ZMsg reply = ZMsg.recvMsg(dealer);
                if (reply == null) {
                    return Answer.SILENT;
                }
                // [empty delimiter, seq, payload]; the end is seq -1.
                ZFrame[] frames = reply.toArray(new ZFrame[0]);
                if (frames.length != 3 || frames[1].size() != 8) {
                    return Answer.BROKEN;
                }
                long seq = ByteBuffer.wrap(frames[1].getData()).getLong();
                if (seq < 0) {
                    return Answer.COMPLETE;
                }
                if (seq < upTo && (last < 0 ? seq >= from : seq == last + 1)) {
                    deliver(seq, frames[2].getData());
                }
            }
            return Answer.BROKEN;
        } finally {
            ctx.destroySocket(dealer);
        }
    }

    private void deliver(long seq, byte[] payload) {
        EngineKvBatch batch;
        try {
            batch = EngineKvBatchDecoder.decode(seq, payload);
        } catch (KvEventFormatException e) {
            reset("batch " + seq + " is unreadable: " + e.getMessage());
            last = seq;
            return;
        }
        listener.onBatch(batch);
        batches++;
        last = seq;
    }

    private void reset(String why) {
        resets++;
        last = -1;
        LOG.log(
                resets == 1 ? Level.WARNING : Level.FINE,
                "KV events of " + name + ": " + why + "; forgetting its cache");
        listener.onReset(why);
    }
}
