package dev.tandem.bench.upstream;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * A KV event publisher as vLLM's {@code ZmqEventPublisher} runs it: a PUB socket sending
 * {@code [topic, 8-byte big-endian seq, msgpack KVEventBatch]} and a ROUTER that, asked for a sequence
 * number, resends the batches its buffer still holds from there, then seq -1. Batches are encoded as
 * msgspec's {@code array_like} structs, as vLLM up to 2025 and SGLang send them:
 * {@code [ts, [events…], data_parallel_rank]}, {@code ["BlockStored", hashes, parent, token_ids,
 * block_size, lora_id, medium]}, {@code ["BlockRemoved", hashes, medium]}. On 127.0.0.1, its own thread.
 */
final class VllmKvEventPublisher implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(VllmKvEventPublisher.class.getName());
    /** vLLM's default {@code buffer_steps}. */
    static final int BUFFER = 10_000;

    /** One event, packed by the caller's thread. */
    record Event(byte[] packed) {}

    private final ZContext ctx = new ZContext();
    private final ZMQ.Socket pub;
    private final ZMQ.Socket replay;
    private final String endpoint;
    private final String replayEndpoint;
    private final LinkedBlockingQueue<Event[]> outbox = new LinkedBlockingQueue<>();
    private final ArrayDeque<byte[]> buffer = new ArrayDeque<>();
    private final Thread thread;
    private volatile boolean running = true;
    private long seq;

    VllmKvEventPublisher(String name) {
        pub = ctx.createSocket(SocketType.PUB);
        pub.setLinger(0);
        pub.setSndHWM(100_000);
        endpoint = "tcp://127.0.0.1:" + pub.bindToRandomPort("tcp://127.0.0.1");
        replay = ctx.createSocket(SocketType.ROUTER);
        replay.setLinger(0);
        replay.setSndHWM(0); // a replay may be thousands of batches: none dropped
        replayEndpoint = "tcp://127.0.0.1:" + replay.bindToRandomPort("tcp://127.0.0.1");
        thread = new Thread(this::run, "sim-vllm-kv-events-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    String endpoint() {
        return endpoint;
    }

    String replayEndpoint() {
        return replayEndpoint;
    }

    /** Queues one batch of events; sent in order from the publisher's thread. */
    void publish(Event... events) {
        if (events.length > 0) {
            outbox.add(events);
        }
    }

    static Event stored(long[] hashes, Long parent, int[] tokens, int blockSize) {
        return new Event(pack(p -> {
            p.packArrayHeader(7).packString("BlockStored");
            packHashes(p, hashes);
            if (parent == null) {
                p.packNil();
            } else {
                p.packLong(parent);
            }
            p.packArrayHeader(tokens.length);
            for (int t : tokens) {
                p.packInt(t);
            }
            p.packInt(blockSize).packNil().packString("GPU");
        }));
    }

    static Event removed(long[] hashes) {
        return new Event(pack(p -> {
            p.packArrayHeader(3).packString("BlockRemoved");
            packHashes(p, hashes);
            p.packString("GPU");
        }));
    }

    private static void packHashes(MessageBufferPacker p, long[] hashes) throws IOException {
        p.packArrayHeader(hashes.length);
        for (long h : hashes) {
            p.packLong(h);
        }
    }

    private interface Packing {
        void accept(MessageBufferPacker p) throws IOException;
    }

    private static byte[] pack(Packing packing) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            packing.accept(p);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void run() {
        ZMQ.Poller poller = ctx.createPoller(1);
        poller.register(replay, ZMQ.Poller.POLLIN);
        while (running) {
            try {
                Event[] batch = outbox.poll(5, TimeUnit.MILLISECONDS);
                while (batch != null) {
                    send(batch);
                    batch = outbox.poll();
                }
                if (poller.poll(0) > 0 && poller.pollin(0)) {
                    ZMsg request;
                    while ((request = ZMsg.recvMsg(replay, ZMQ.DONTWAIT)) != null) {
                        VllmKvEventReplay.answer(replay, request, seq - buffer.size(), buffer);
                    }
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (running) {
                    LOG.log(Level.WARNING, "the sim KV event publisher failed: " + e, e);
                }
                return;
            }
        }
    }

    private void send(Event[] events) {
        byte[] payload = pack(p -> {
            p.packArrayHeader(3).packDouble(System.currentTimeMillis() / 1000.0);
            p.packArrayHeader(events.length);
            for (Event e : events) {
                p.writePayload(e.packed());
            }
            p.packInt(0);
        });
        buffer.addLast(payload);
        if (buffer.size() > BUFFER) {
            buffer.removeFirst();
        }
        pub.sendMore(new byte[0]);
        pub.sendMore(ByteBuffer.allocate(8).putLong(seq++).array());
        pub.send(payload);
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ctx.close();
    }
}
