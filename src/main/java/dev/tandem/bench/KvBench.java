package dev.tandem.bench;

import dev.tandem.protocol.Addresses;
import dev.tandem.worker.kv.KvChunkSender;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One KV transfer as Tandem makes it — chunks over the clustered event bus, fire-and-forget with the
 * KV_CACHE headers, the last one a request whose reply is the acknowledgement — next to the same bytes
 * over one raw loopback TCP socket, to a peer JVM ({@link KvPeerCommand}); optionally also over the event
 * bus of a second cluster whose members speak mutual TLS (cluster.tls-*), to a second peer JVM. Each size
 * is sent {@code repeats} times after a warm-up, over each path in turn; the median time gives MiB/s.
 */
public final class KvBench {

    /** MiB/s per size (MiB) over each path; {@code eventBusMtls} null when that path was not measured. */
    public record Result(
            List<Integer> sizesMib,
            Map<Integer, Double> eventBus,
            Map<Integer, Double> rawTcp,
            Map<Integer, Double> eventBusMtls) {

        /** Without the event bus under mutual TLS. */
        public Result(List<Integer> sizesMib, Map<Integer, Double> eventBus, Map<Integer, Double> rawTcp) {
            this(sizesMib, eventBus, rawTcp, null);
        }

        /**
         * {@code {"sizes_mib": [...], "eventbus_mib_s": {SIZE: x}, "raw_tcp_mib_s": {SIZE: x}}}, and
         * {@code "eventbus_mtls_mib_s": {SIZE: x}} when that path ran: other tools read it.
         */
        public JsonObject summary() {
            JsonObject summary = new JsonObject()
                    .put("sizes_mib", new JsonArray(new ArrayList<>(sizesMib)))
                    .put("eventbus_mib_s", rates(eventBus))
                    .put("raw_tcp_mib_s", rates(rawTcp));
            if (eventBusMtls != null) {
                summary.put("eventbus_mtls_mib_s", rates(eventBusMtls));
            }
            return summary;
        }

        private static JsonObject rates(Map<Integer, Double> rates) {
            JsonObject out = new JsonObject();
            rates.forEach((size, rate) -> out.put(Integer.toString(size), Math.round(rate * 10) / 10.0));
            return out;
        }
    }

    /** Longest a transfer may take before the bench gives up on it (256 MiB at 10 MiB/s fits). */
    static final long TRANSFER_TIMEOUT_MS = 60_000;

    private final Vertx vertx;
    private final Vertx mtlsVertx;
    private final int peerTcpPort;
    private final int chunkBytes;
    private final int repeats;
    private final int minMib;
    private final int window;
    private final int warmupMib;
    private long transfer;

    /**
     * @param warmupMib MiB sent over each path before measuring: the receive path (socket reads, the
     *     event bus's record parser, the codec) runs in the interpreter and C1 for its first few hundred
     *     MiB, and a bench that measures that compares compilers, not transports
     * @param minMib MiB each path carries per size at the least, in more than {@code repeats} transfers if
     *     need be (see {@link #transfers})
     */
    public KvBench(Vertx vertx, int peerTcpPort, int chunkBytes, int repeats, int minMib, int window, int warmupMib) {
        this(vertx, null, peerTcpPort, chunkBytes, repeats, minMib, window, warmupMib);
    }

    /**
     * @param mtlsVertx a member of a second cluster, under mutual TLS, whose peer takes the same transfers
     *     (the "event bus (mTLS)" path); null = that path is not measured
     */
    public KvBench(
            Vertx vertx,
            Vertx mtlsVertx,
            int peerTcpPort,
            int chunkBytes,
            int repeats,
            int minMib,
            int window,
            int warmupMib) {
        this.vertx = vertx;
        this.mtlsVertx = mtlsVertx;
        this.minMib = minMib;
        this.window = window;
        this.warmupMib = warmupMib;
        this.peerTcpPort = peerTcpPort;
        this.chunkBytes = chunkBytes;
        this.repeats = repeats;
    }

    public Result run(List<Integer> sizesMib, PrintStream out) {
        NetClient client = vertx.createNetClient();
        NetSocket socket = client.connect(peerTcpPort, "127.0.0.1").await();
        TcpReplies replies = new TcpReplies(socket);
        Map<Integer, Double> eventBus = new TreeMap<>();
        Map<Integer, Double> raw = new TreeMap<>();
        Map<Integer, Double> mtls = mtlsVertx == null ? null : new TreeMap<>();
        if (mtls == null) {
            out.printf(
                    "  %8s  %9s  %14s  %14s  %6s%n", "MiB", "transfers", "event bus MiB/s", "raw TCP MiB/s", "ratio");
        } else {
            out.printf(
                    "  %8s  %9s  %14s  %21s  %14s  %7s  %8s%n",
                    "MiB",
                    "transfers",
                    "event bus MiB/s",
                    "event bus (mTLS) MiB/s",
                    "raw TCP MiB/s",
                    "bus/TCP",
                    "mTLS/bus");
        }
        warmUp(socket, replies, sizesMib);
        for (int size : sizesMib) {
            Buffer payload = payload(size);
            int transfers = transfers(size, repeats, minMib);
            long[] bus = new long[transfers];
            long[] busTls = new long[transfers];
            long[] tcp = new long[transfers];
            for (int r = 0; r < transfers; r++) {
                bus[r] = viaEventBus(vertx, payload);
                if (mtls != null) {
                    busTls[r] = viaEventBus(mtlsVertx, payload);
                }
                tcp[r] = viaTcp(socket, replies, payload);
            }
            double busRate = size / (median(bus) / 1e9);
            double tcpRate = size / (median(tcp) / 1e9);
            eventBus.put(size, busRate);
            raw.put(size, tcpRate);
            if (mtls == null) {
                out.printf(
                        "  %8d  %9d  %14.1f  %14.1f  %5.0f%%%n",
                        size, transfers, busRate, tcpRate, 100 * busRate / tcpRate);
            } else {
                double tlsRate = size / (median(busTls) / 1e9);
                mtls.put(size, tlsRate);
                out.printf(
                        "  %8d  %9d  %15.1f  %22.1f  %14.1f  %6.0f%%  %7.0f%%%n",
                        size, transfers, busRate, tlsRate, tcpRate, 100 * busRate / tcpRate, 100 * tlsRate / busRate);
            }
        }
        socket.close().await();
        client.close().await();
        return new Result(List.copyOf(sizesMib), eventBus, raw, mtls);
    }

    /**
     * Transfers per size and path: {@code repeats}, or as many as carry {@code minMib}. Five 16 MiB
     * transfers over raw TCP last about 25 ms in all here, and their median moved between 1.3 and 4.9 GiB/s
     * from one run to the next; a time that short measures the scheduler more than the socket.
     */
    static int transfers(int sizeMib, int repeats, int minMib) {
        return Math.max(repeats, (minMib + sizeMib - 1) / sizeMib);
    }

    /**
     * The connections, the peer's consumer registration and the JIT: transfers of the largest size (at most
     * 64 MiB) over every path in turn until each has carried {@code warmupMib}, and at least three.
     */
    private void warmUp(NetSocket socket, TcpReplies replies, List<Integer> sizesMib) {
        int size =
                Math.min(64, sizesMib.stream().mapToInt(Integer::intValue).max().orElse(4));
        Buffer payload = payload(size);
        for (long sent = 0, rounds = 0; sent < warmupMib || rounds < 3; sent += size, rounds++) {
            viaEventBus(vertx, payload);
            if (mtlsVertx != null) {
                viaEventBus(mtlsVertx, payload);
            }
            viaTcp(socket, replies, payload);
        }
    }

    private static Buffer payload(int mib) {
        byte[] bytes = new byte[mib << 20];
        ThreadLocalRandom.current().nextBytes(bytes);
        return Buffer.buffer(bytes);
    }

    /**
     * Nanoseconds from the first chunk sent over {@code member}'s event bus (one cluster's) to the
     * acknowledgement. Blocks the caller (not an event loop).
     */
    private long viaEventBus(Vertx member, Buffer payload) {
        long id = ++transfer;
        Promise<Long> done = Promise.promise();
        member.runOnContext(v -> {
            long start = System.nanoTime();
            List<Buffer> chunks = new ArrayList<>();
            for (int at = 0; at < payload.length(); at += chunkBytes) {
                chunks.add(payload.slice(at, Math.min(payload.length(), at + chunkBytes)));
            }
            KvChunkSender.send(member, Addresses.BENCH_KV, chunks, id, 0, window, 120_000)
                    .onSuccess(reply -> {
                        long got = reply.body().getLong("bytes_received");
                        if (got != payload.length()) {
                            done.tryFail("the peer received " + got + " of " + payload.length() + " bytes");
                        } else {
                            done.tryComplete(System.nanoTime() - start);
                        }
                    })
                    .onFailure(done::tryFail);
        });
        return bounded(done);
    }

    /** Nanoseconds from the first byte written to the peer's count coming back. Blocks the caller. */
    private long viaTcp(NetSocket socket, TcpReplies replies, Buffer payload) {
        Promise<Long> done = Promise.promise();
        vertx.runOnContext(v -> {
            long start = System.nanoTime();
            replies.expect(count -> {
                if (count != payload.length()) {
                    done.tryFail("the peer counted " + count + " of " + payload.length() + " bytes");
                } else {
                    done.tryComplete(System.nanoTime() - start);
                }
            });
            socket.write(Buffer.buffer().appendLong(payload.length()));
            writeChunks(socket, payload, 0);
        });
        return bounded(done);
    }

    /**
     * Waits for a transfer, at most {@link #TRANSFER_TIMEOUT_MS}: the bench stops by itself even when a
     * transfer never completes (seen once with {@code --window 64 --chunk-kib 32} at 256 MiB, where the
     * ack's own timeout never fired).
     */
    private long bounded(Promise<Long> done) {
        long timer = vertx.setTimer(
                TRANSFER_TIMEOUT_MS,
                t -> done.tryFail("the transfer did not complete within " + TRANSFER_TIMEOUT_MS + " ms"));
        try {
            return done.future().await();
        } finally {
            vertx.cancelTimer(timer);
        }
    }

    /** Writes the payload in chunks of the same size as the event bus's, respecting the socket's backpressure. */
    private void writeChunks(NetSocket socket, Buffer payload, int from) {
        int at = from;
        while (at < payload.length()) {
            if (socket.writeQueueFull()) {
                int resume = at;
                // One-shot: a handler left behind would write this payload again into a later transfer.
                socket.drainHandler(v -> {
                    socket.drainHandler(null);
                    writeChunks(socket, payload, resume);
                });
                return;
            }
            int end = Math.min(payload.length(), at + chunkBytes);
            socket.write(payload.slice(at, end));
            at = end;
        }
    }

    private static double median(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /** The peer's 8-byte counts (one per transfer; they may arrive in pieces), handed to whoever waits. */
    private static final class TcpReplies {
        private Buffer pending = Buffer.buffer();
        private java.util.function.LongConsumer waiter;

        TcpReplies(NetSocket socket) {
            socket.handler(data -> {
                pending.appendBuffer(data);
                if (pending.length() >= 8 && waiter != null) {
                    long count = pending.getLong(0);
                    pending = pending.getBuffer(8, pending.length());
                    java.util.function.LongConsumer w = waiter;
                    waiter = null;
                    w.accept(count);
                }
            });
        }

        void expect(java.util.function.LongConsumer next) {
            waiter = next;
        }
    }
}
