package dev.tandem.worker.kv;

import dev.tandem.config.WorkerSettings;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.metrics.WorkerMetrics;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.KvAck;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.worker.Throughput;
import io.opentelemetry.api.trace.Span;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Ships a prompt's KV to its decode worker in bounded chunks; the last chunk is a request whose answer
 * is the decode worker's KV_CACHE_ACK. A decode worker with a KV cache gets version 2 of the stream
 * without the leading blocks the router believes it holds; should it have lost some meanwhile, its ack
 * says from which block it needs the KV, and it gets that — once; correctness never rests on the index.
 * The first round is encoded by the caller right after the prefill, on its compute thread ({@link
 * #encode}): on a thread of its own it cost two thread hops per prompt (~0.2 ms each on this VM when the
 * threads sleep), and as a separate compute task it queued behind every prompt accepted meanwhile. A
 * resend is encoded on Vert.x's worker pool; sending is on the event loop.
 */
public final class KvShipper {
    /** Times a decode worker may ask for more before the transfer fails. */
    static final int MAX_RESENDS = 1;

    /** A transfer of this many bytes counts fully in the rate; smaller ones (more overhead) in proportion. */
    private static final double RATE_SPAN_BYTES = 64 << 20;

    /**
     * The KV bytes moved over every round: what went on the wire, with each block counted at the size
     * the engine holds it ({@link dev.tandem.engine.KvLayout#blockBytes()}) — the same for engines whose
     * blocks travel as they are, the modelled size for a simulated one.
     */
    public record Shipped(long bytes) {}

    /** A round's chunks, from {@code startBlock} on (-1: the whole cache as version 1). */
    public record Round(int startBlock, List<Buffer> chunks) {}

    private final Vertx vertx;
    private final WorkerSettings settings;
    private final Engine engine;
    private final long fingerprint;
    private final WorkerMetrics metrics;
    private final Throughput rate;

    public KvShipper(Vertx vertx, WorkerSettings settings, Engine engine, WorkerMetrics metrics) {
        this.vertx = vertx;
        this.settings = settings;
        this.engine = engine;
        this.fingerprint = engine.info().fingerprint();
        this.metrics = metrics;
        this.rate = new Throughput(expectedBytesPerSecond(engine), RATE_SPAN_BYTES);
    }

    /** The engine's modelled interconnect, when it models one: the rate's prior. */
    private static double expectedBytesPerSecond(Engine engine) {
        long nanos = engine.transferNanos(1L << 30);
        return nanos <= 0 ? 0 : (1L << 30) / (nanos / 1e9);
    }

    /** KV bytes per second, sending to ack, over the recent rounds (the prior before the first; 0: unknown). */
    public double bytesPerSecond() {
        return rate.perSecond();
    }

    /** The full size of the prompt's KV as version 1 ships it: the per-request limit is checked against it. */
    public static long fullSize(KvCache cache) {
        return KvTransferCodec.encodedSize(cache.layout(), cache.length());
    }

    /**
     * The first round's chunks: without the leading blocks the router believes the decode worker holds.
     * Blocking: call on the compute thread that prefilled the cache.
     */
    public Round encode(PrefillRequest request, KvCache cache) {
        int startBlock = request.decodeCachedBlocks() == PrefillRequest.NO_DECODE_CACHE
                ? -1
                : Math.min(request.decodeCachedBlocks(), cache.layout().blocksFor(cache.length()) - 1);
        return new Round(startBlock, encode(request, cache, startBlock));
    }

    /** Ships {@code first} (from {@link #encode}), then whatever the decode worker asks for again. */
    /** @param span the transfer's span: its trace context goes with each round's first chunk */
    public Future<Shipped> ship(
            PrefillRequest request, KvCache cache, Round first, BooleanSupplier cancelled, Span span) {
        return round(request, cache, first, cancelled, span, 0, 0);
    }

    private Future<Shipped> round(
            PrefillRequest request,
            KvCache cache,
            Round round,
            BooleanSupplier cancelled,
            Span span,
            int resends,
            long sent) {
        if (cancelled.getAsBoolean()) {
            return Future.failedFuture(new CancellationException());
        }
        KvLayout layout = cache.layout();
        int startBlock = round.startBlock();
        int blocks = layout.blocksFor(cache.length()) - Math.max(startBlock, 0);
        // A sim engine counts its modelled model's bytes beyond the stand-in floats it sends; a real
        // engine's count is what travelled (an f16 model's KV in half the bytes of its floats).
        long counted = blocks * Math.max(0, layout.blockBytes() - (long) layout.blockFloats() * Float.BYTES);
        long start = System.nanoTime();
        return interconnect(blocks * layout.blockBytes())
                .compose(v -> send(request, round.chunks(), span))
                .compose(ack -> {
                    rate.record((double) blocks * layout.blockBytes(), System.nanoTime() - start);
                    long total = sent + ack.bytesReceived() + counted;
                    if (ack.needFromBlock() == KvAck.COMPLETE) {
                        return Future.succeededFuture(new Shipped(total));
                    }
                    if (resends >= MAX_RESENDS || ack.needFromBlock() >= Math.max(startBlock, 0)) {
                        return Future.failedFuture(new IllegalStateException("decode worker " + request.decodeWorkerId()
                                + " asked for the KV from block " + ack.needFromBlock() + " after " + resends
                                + " resends"));
                    }
                    int from = ack.needFromBlock();
                    return vertx.<List<Buffer>>executeBlocking(() -> encode(request, cache, from), false)
                            .compose(chunks -> round(
                                    request, cache, new Round(from, chunks), cancelled, span, resends + 1, total));
                });
    }

    /** Waits what the engine's modelled interconnect takes for these bytes (no wait for a real engine). */
    private Future<Void> interconnect(long bytes) {
        long nanos = engine.transferNanos(bytes);
        if (nanos <= 0) {
            return Future.succeededFuture();
        }
        return vertx.timer(Math.max(1, nanos / 1_000_000), TimeUnit.MILLISECONDS)
                .mapEmpty();
    }

    private List<Buffer> encode(PrefillRequest request, KvCache cache, int startBlock) {
        return startBlock < 0
                ? KvTransferCodec.encode(cache, fingerprint, settings.kvChunkBytes())
                : KvTransferCodec.encode(
                        cache, fingerprint, settings.kvChunkBytes(), request.promptTokens(), startBlock);
    }

    /**
     * Sends the chunks in order, a bounded window at a time ({@link KvChunkSender}); the last one is a
     * request whose reply is the decode worker's ack.
     */
    private Future<KvAck> send(PrefillRequest request, List<Buffer> chunks, Span span) {
        long total = 0;
        for (Buffer chunk : chunks) {
            total += chunk.length();
        }
        long expected = total;
        long start = System.nanoTime();
        String address = Addresses.decodeKv(request.decodeWorkerId());
        return KvChunkSender.send(
                        vertx,
                        address,
                        chunks,
                        request.requestId(),
                        request.attempt(),
                        KvChunkSender.DEFAULT_WINDOW,
                        settings.kvParkTimeoutMs(),
                        span)
                .map(reply -> {
                    KvAck ack = KvAck.CODEC.decode(reply.body());
                    if (ack.bytesReceived() != expected) {
                        throw new IllegalStateException(
                                "decode worker acknowledged " + ack.bytesReceived() + " of " + expected + " bytes");
                    }
                    metrics.kvShipped(System.nanoTime() - start, expected);
                    return ack;
                });
    }
}
