package dev.tandem.worker.kv;

import dev.tandem.engine.KvBlockPool;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.protocol.KvAck;
import dev.tandem.protocol.KvChunk;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.WorkerFailure;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import java.util.HashMap;
import java.util.Map;

/**
 * The decode side of KV transfer: assembles each request's chunks, answers the last chunk with
 * KV_CACHE_ACK (or the reason it was refused), and parks the finished cache until its DECODE_REQUEST
 * claims it. Anything not claimed within the park timeout is freed — a router that vanished between
 * prefill and decode leaves no KV behind. Runs on the worker's event loop.
 */
public final class KvInbox {

    private final class Transfer {
        final long requestId;
        final int attempt;
        final KvTransferAssembler assembler;
        final long timerId;
        int nextIndex;
        /** Set once a chunk was refused; later chunks are dropped and the last one gets this answer. */
        WorkerFailure failure;

        String failureMessage;

        Transfer(long requestId, int attempt, KvTransferAssembler assembler) {
            this.requestId = requestId;
            this.attempt = attempt;
            this.assembler = assembler;
            this.timerId = vertx.setTimer(parkTimeoutMs, id -> expire(requestId));
        }
    }

    private record Parked(KvCache cache, int[] tokens, int attempt, long timerId) {}

    /** A request's KV, and the token ids of its positions when the sender said (null otherwise). */
    public record Claimed(KvCache cache, int[] tokens) {}

    /** Whether the batch decodes the request already, for KV of this attempt arriving (it may drop an older one). */
    public interface AlreadyDecoding {
        boolean test(long requestId, int attempt);
    }

    private final Vertx vertx;
    private final KvLayout layout;
    private final long fingerprint;
    private final long maxBytes;
    private final long parkTimeoutMs;
    private final KvTransferAssembler.PrefixSource prefixSource;
    private final KvBlockPool pool;
    private final Map<Long, Transfer> incoming = new HashMap<>();
    private final Map<Long, Parked> parked = new HashMap<>();
    /**
     * Requests cancelled here, oldest first: a cancel can overtake its request's KV on the event bus (the
     * router and the prefill worker are different senders), and KV arriving after it must not be parked for
     * the park timeout with nobody left to claim it. Kept for a park timeout, at most MAX_CANCELLED.
     */
    private final java.util.LinkedHashMap<Long, Cancelled> cancelled = new java.util.LinkedHashMap<>();

    private long expired;
    /** Kept as the maps change, so that metrics read them from any thread without walking the maps. */
    private volatile long parkedBytes;

    private volatile long incomingBytes;
    private volatile int parkedCount;
    private volatile int incomingCount;

    private record Cancelled(dev.tandem.protocol.CancelRequest cancel, long atNanos) {}

    private static final int MAX_CANCELLED = 4096;

    /** @param prefixSource where the leading blocks an incremental transfer leaves out come from */
    public KvInbox(
            Vertx vertx,
            KvLayout layout,
            long fingerprint,
            long maxBytes,
            long parkTimeoutMs,
            KvTransferAssembler.PrefixSource prefixSource,
            KvBlockPool pool) {
        this.vertx = vertx;
        this.pool = pool;
        this.prefixSource = prefixSource;
        this.layout = layout;
        this.fingerprint = fingerprint;
        this.maxBytes = maxBytes;
        this.parkTimeoutMs = parkTimeoutMs;
    }

    /**
     * Handles one KV_CACHE message. {@code noRoom} is asked when a new transfer starts (this one already
     * counted as incoming): null to take it, or why the worker is full.
     */
    public void onChunk(
            Message<Object> message, AlreadyDecoding alreadyKnown, java.util.function.Supplier<String> noRoom) {
        KvChunk chunk;
        try {
            chunk = KvChunk.fromMessage(message.headers(), message.body());
        } catch (ProtocolException e) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), e.getMessage());
            return;
        }
        long id = chunk.requestId();
        if (chunk.index() == 0 && supersedes(id, chunk.attempt())) {
            // A newer dispatch of the request: what an older one left here (its sender never cancelled it,
            // or the cancel is still on its way) is dropped, not allowed to block the new KV.
            drop(id);
        }
        Transfer t = incoming.get(id);
        if (t != null && chunk.attempt() != t.attempt) {
            // A stale attempt's chunks: its transfer was dropped or superseded; never mix them into this one.
            refuse(
                    message,
                    chunk,
                    WorkerFailure.CANCELLED,
                    "KV of attempt " + chunk.attempt() + " of request " + id + " was superseded by attempt "
                            + t.attempt);
            return;
        }
        if (t == null && chunk.index() == 0 && cancelledAlready(id, chunk.attempt())) {
            // Its cancel came first: take nothing, answer the last chunk "cancelled" and drop the rest unread.
            t = new Transfer(
                    id, chunk.attempt(), new KvTransferAssembler(layout, fingerprint, maxBytes, prefixSource, pool));
            startTransfer(t);
            fail(t, WorkerFailure.CANCELLED, "request " + id + " was cancelled before its KV arrived");
        }
        if (t == null) {
            if (chunk.index() != 0 || parked.containsKey(id) || alreadyKnown.test(id, chunk.attempt())) {
                refuse(
                        message,
                        chunk,
                        WorkerFailure.KV_TRANSFER_FAILED,
                        "unexpected KV chunk " + chunk.index() + " for request " + id);
                return;
            }
            t = new Transfer(
                    id, chunk.attempt(), new KvTransferAssembler(layout, fingerprint, maxBytes, prefixSource, pool));
            startTransfer(t);
            String full = noRoom.get();
            if (full != null) {
                // No room: take nothing, and answer the last chunk so the router tries another worker.
                fail(t, WorkerFailure.OVER_CAPACITY, full);
            }
        }
        if (t.failure == null) {
            accept(t, chunk);
        }
        if (!chunk.last()) {
            return;
        }
        finish(message, id, t);
    }

    /** The last chunk came: answer it with the failure, a request for evicted blocks, or the KV parked. */
    private void finish(Message<Object> message, long id, Transfer t) {
        endTransfer(id);
        if (t.failure != null) {
            t.assembler.discard();
            vertx.cancelTimer(t.timerId);
            message.fail(t.failure.code(), t.failureMessage);
            return;
        }
        if (t.assembler.complete() && t.assembler.needFromBlock() >= 0) {
            // An incremental transfer counted on blocks this worker has evicted since: ask for them.
            vertx.cancelTimer(t.timerId);
            message.reply(KvAck.CODEC.encode(new KvAck(
                    id, t.assembler.bytesReceived(), t.assembler.tokens().length, t.assembler.needFromBlock())));
            return;
        }
        try {
            KvCache cache = t.assembler.finish();
            vertx.cancelTimer(t.timerId);
            park(id, t.attempt, cache, t.assembler.tokens());
            message.reply(KvAck.CODEC.encode(new KvAck(id, t.assembler.bytesReceived(), cache.length())));
        } catch (KvTransferException e) {
            vertx.cancelTimer(t.timerId);
            message.fail(failureOf(e).code(), e.getMessage());
        }
    }

    /**
     * Parks a request's KV until its DECODE_REQUEST claims it (or the park timeout frees it); false, with the
     * KV freed, when this attempt was cancelled here meanwhile.
     */
    public boolean park(long requestId, int attempt, KvCache cache, int[] tokens) {
        unpark(requestId, true); // an older attempt's KV parked here is dead: its timer must not expire the new one
        if (cancelledAlready(requestId, attempt)) {
            // The cancel came while the KV was being computed here: nobody will claim it.
            cache.free();
            return false;
        }
        parked.put(
                requestId, new Parked(cache, tokens, attempt, vertx.setTimer(parkTimeoutMs, tid -> expire(requestId))));
        parkedBytes += cache.bytes();
        parkedCount = parked.size();
        return true;
    }

    private void startTransfer(Transfer t) {
        incoming.put(t.requestId, t);
        incomingCount = incoming.size();
    }

    /** The transfer leaves the inbox (done, refused or dropped); null when there was none. */
    private Transfer endTransfer(long requestId) {
        Transfer t = incoming.remove(requestId);
        if (t != null) {
            incomingBytes -= t.assembler.bytesReceived();
            incomingCount = incoming.size();
        }
        return t;
    }

    /** Takes a request's parked KV out; with {@code free}, also stops its timer and lets its blocks go. */
    private Parked unpark(long requestId, boolean free) {
        Parked p = parked.remove(requestId);
        if (p != null) {
            parkedBytes -= p.cache.bytes();
            parkedCount = parked.size();
            if (free) {
                vertx.cancelTimer(p.timerId);
                p.cache.free();
            }
        }
        return p;
    }

    private void accept(Transfer t, KvChunk chunk) {
        if (chunk.index() != t.nextIndex) {
            fail(
                    t,
                    WorkerFailure.KV_TRANSFER_FAILED,
                    "KV chunk " + chunk.index() + " arrived, expected " + t.nextIndex);
            return;
        }
        t.nextIndex++;
        long before = t.assembler.bytesReceived();
        try {
            t.assembler.accept(chunk.payload());
        } catch (KvTransferException e) {
            fail(t, failureOf(e), e.getMessage());
        }
        incomingBytes += t.assembler.bytesReceived() - before;
    }

    private void fail(Transfer t, WorkerFailure failure, String message) {
        t.failure = failure;
        t.failureMessage = message;
    }

    private static WorkerFailure failureOf(KvTransferException e) {
        return switch (e.reason()) {
            case TOO_LARGE -> WorkerFailure.KV_TOO_LARGE;
            case MODEL_MISMATCH, LAYOUT_MISMATCH -> WorkerFailure.MODEL_MISMATCH;
            default -> WorkerFailure.KV_TRANSFER_FAILED;
        };
    }

    private void refuse(Message<Object> message, KvChunk chunk, WorkerFailure failure, String text) {
        if (chunk.last()) {
            message.fail(failure.code(), text);
        }
    }

    /** True when a transfer of {@code attempt} is newer than what the request holds here. */
    private boolean supersedes(long requestId, int attempt) {
        Transfer t = incoming.get(requestId);
        Parked p = parked.get(requestId);
        return t != null && attempt > t.attempt || p != null && attempt > p.attempt;
    }

    /**
     * Hands the parked KV of a request's attempt to its DECODE_REQUEST; null when there is none. KV of
     * attempt 0 came from a sender that does not number attempts (a worker in another language): any
     * attempt may claim it.
     */
    public Claimed claim(long requestId, int attempt) {
        Parked p = parked.get(requestId);
        if (p == null || p.attempt != attempt && p.attempt != 0) {
            return null;
        }
        unpark(requestId, false);
        vertx.cancelTimer(p.timerId);
        return new Claimed(p.cache, p.tokens);
    }

    /**
     * Frees what the cancel's attempt of the request holds here (every attempt's, for an unscoped cancel),
     * and remembers the cancel for KV of that attempt still on its way.
     */
    public boolean drop(long requestId, dev.tandem.protocol.CancelRequest cancel) {
        remember(requestId, cancel);
        Transfer t = incoming.get(requestId);
        Parked p = parked.get(requestId);
        if ((t == null || !cancel.covers(t.attempt)) && (p == null || !cancel.covers(p.attempt))) {
            return false;
        }
        return drop(requestId);
    }

    /** Frees whatever the request holds here; true if it held anything. */
    public boolean drop(long requestId) {
        Transfer t = endTransfer(requestId);
        if (t != null) {
            vertx.cancelTimer(t.timerId);
            t.assembler.discard();
        }
        Parked p = unpark(requestId, true);
        return t != null || p != null;
    }

    private void remember(long requestId, dev.tandem.protocol.CancelRequest cancel) {
        long now = System.nanoTime();
        cancelled.remove(requestId);
        cancelled.put(requestId, new Cancelled(cancel, now));
        long maxAge = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(parkTimeoutMs);
        for (var it = cancelled.values().iterator(); it.hasNext(); ) {
            Cancelled c = it.next();
            if (cancelled.size() <= MAX_CANCELLED && now - c.atNanos <= maxAge) {
                break;
            }
            it.remove();
        }
    }

    /** Was this attempt of the request cancelled here within the park timeout? */
    private boolean cancelledAlready(long requestId, int attempt) {
        Cancelled c = cancelled.get(requestId);
        return c != null
                && c.cancel.covers(attempt)
                && System.nanoTime() - c.atNanos <= java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(parkTimeoutMs);
    }

    private void expire(long requestId) {
        if (incoming.containsKey(requestId) || parked.containsKey(requestId)) {
            expired++;
            drop(requestId);
        }
    }

    public boolean holds(long requestId) {
        return incoming.containsKey(requestId) || parked.containsKey(requestId);
    }

    public int parkedCount() {
        return parkedCount;
    }

    public int incomingCount() {
        return incomingCount;
    }

    public long expiredCount() {
        return expired;
    }

    /** KV parked until its DECODE_REQUEST claims it. Any thread. */
    public long parkedBytes() {
        return parkedBytes;
    }

    /** KV of transfers still arriving, as much as has arrived. Any thread. */
    public long incomingBytes() {
        return incomingBytes;
    }
}
