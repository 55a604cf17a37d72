package dev.tandem.bridge.worker;

import dev.tandem.bridge.BridgeFrames;
import dev.tandem.bridge.BridgeSocket;
import dev.tandem.protocol.BlockHashes;
import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.KvCacheEvents;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.WorkerJoin;
import dev.tandem.worker.kv.KvCacheLedger;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * An external worker's prefix cache as the routers see it: the bridge turns the worker's event frames
 * ({@code stored}, {@code removed}, {@code cleared}, over token ids) into Tandem's own numbered
 * {@link KvCacheEvents} — block hashes by {@link BlockHashes}, chained over the worker's model fingerprint —
 * published on {@code tandem.kv.events}, and answers the routers' snapshot requests from the blocks it
 * knows the worker holds. A frame is checked whole before anything of it applies: a bad one changes
 * nothing. Event loop only.
 */
final class BridgeKvEvents {
    /** The most events in one frame, and the most blocks in one event. */
    static final int MAX_EVENTS = 1024;

    static final int MAX_BLOCKS = 4096;

    /** Refuses a frame with an {@code err} frame (the connection's own refusal, counted). */
    interface Refusals {
        void refuse(String code, String detail, String replyAddress);
    }

    private final long fingerprint;
    private final int blockSize;
    private final BridgeSocket socket;
    private final Refusals refusals;
    private final KvCacheLedger ledger;

    BridgeKvEvents(
            EventBus eventBus,
            String workerId,
            long fingerprint,
            int blockSize,
            BridgeSocket socket,
            Refusals refusals) {
        this.fingerprint = fingerprint;
        this.blockSize = blockSize;
        this.socket = socket;
        this.refusals = refusals;
        this.ledger = new KvCacheLedger(eventBus, workerId);
    }

    /**
     * The events of a worker that joined: when it announced a {@code kv_cache}, routers may ask it for a
     * snapshot at {@code tandem.worker.<id>.kv-snapshot} (the bridge answers); when not, its event frames
     * are refused ({@code no_kv_cache}).
     */
    static BridgeKvEvents attach(
            ExternalWorker worker, WorkerJoin join, EventBus eventBus, BridgeSocket socket, Refusals refusals) {
        BridgeKvEvents events = new BridgeKvEvents(
                eventBus, worker.id(), join.modelFingerprint(), join.kvBlockSize(), socket, refusals);
        if (join.kvBlockSize() > 0) {
            worker.addConsumer(events.ledger.serveSnapshots());
        }
        return events;
    }

    /** An event frame from the worker: applied and answered with its batch, or refused whole. */
    void onFrame(Object body, String replyAddress) {
        if (blockSize == 0) {
            refusals.refuse("no_kv_cache", "this worker announced no kv_cache at join", replyAddress);
            return;
        }
        JsonObject answer;
        try {
            answer = apply(body);
        } catch (ProtocolException e) {
            refusals.refuse("invalid_kv_events", e.getMessage(), replyAddress);
            return;
        }
        if (replyAddress != null) {
            socket.write(BridgeFrames.message(replyAddress, answer, null, true));
        }
    }

    /** A change of the worker's cache: blocks stored or removed, or everything gone. */
    private record Change(boolean store, long[] hashes, boolean clear) {}

    /**
     * Applies one event frame's body, {@code {"events": [...]}}, and publishes the net change as the next
     * batch (none when nothing changed); the answer names the batch and the stored blocks' hashes, in
     * order, so a worker may chain later blocks on them.
     *
     * @throws ProtocolException when anything in the frame is malformed; nothing of it is applied
     */
    JsonObject apply(Object body) {
        JsonArray events = JsonCodec.object(body).getJsonArray("events");
        if (events == null || events.size() > MAX_EVENTS) {
            throw new ProtocolException("'events' must be an array of at most " + MAX_EVENTS + " events");
        }
        List<Change> changes = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            if (!(events.getValue(i) instanceof JsonObject e)) {
                throw new ProtocolException("events[" + i + "] must be an object");
            }
            changes.add(change(e, "events[" + i + "]"));
        }
        JsonArray storedHashes = new JsonArray();
        for (Change c : changes) {
            if (c.clear()) {
                ledger.clear();
            } else if (c.store()) {
                java.util.Arrays.stream(c.hashes()).forEach(storedHashes::add);
                ledger.store(c.hashes(), false);
            } else {
                ledger.remove(c.hashes(), false);
            }
        }
        return new JsonObject().put("seq", ledger.publish()).put("stored", storedHashes);
    }

    private Change change(JsonObject e, String where) {
        String type = e.getValue("type") instanceof String t ? t : "";
        return switch (type) {
            case "stored" -> new Change(true, blocks(e, where), false);
            case "removed" ->
                new Change(false, e.containsKey("block_hashes") ? hashes(e, where) : blocks(e, where), false);
            case "cleared" -> new Change(false, new long[0], true);
            default -> throw new ProtocolException(where + ".type must be stored, removed or cleared");
        };
    }

    /** {@code {"parent_hash"?: i64, "blocks": [[token ids] …]}}: consecutive full blocks after the parent. */
    private long[] blocks(JsonObject e, String where) {
        Object parent = e.getValue("parent_hash");
        if (parent != null && !(parent instanceof Number n && n.doubleValue() == n.longValue())) {
            throw new ProtocolException(where + ".parent_hash must be an integer (a block hash)");
        }
        long previous = parent == null ? BlockHashes.ROOT : ((Number) parent).longValue();
        Object value = e.getValue("blocks");
        if (!(value instanceof JsonArray blocks) || blocks.isEmpty() || blocks.size() > MAX_BLOCKS) {
            throw new ProtocolException(where + ".blocks must be 1 to " + MAX_BLOCKS + " blocks of token ids");
        }
        long[] out = new long[blocks.size()];
        for (int b = 0; b < out.length; b++) {
            int[] tokens = tokens(blocks.getValue(b), where + ".blocks[" + b + "]");
            previous = BlockHashes.chain(fingerprint, previous, tokens, 0, tokens.length);
            out[b] = previous;
        }
        return out;
    }

    private int[] tokens(Object value, String where) {
        if (!(value instanceof JsonArray block) || block.size() != blockSize) {
            throw new ProtocolException(where + " must be " + blockSize + " token ids (the announced block size)");
        }
        int[] tokens = new int[blockSize];
        for (int i = 0; i < blockSize; i++) {
            if (!(block.getValue(i) instanceof Number n) || n.doubleValue() != n.intValue() || n.intValue() < 0) {
                throw new ProtocolException(where + " must hold token ids (integers, 0 or more)");
            }
            tokens[i] = n.intValue();
        }
        return tokens;
    }

    private static long[] hashes(JsonObject e, String where) {
        if (!(e.getValue("block_hashes") instanceof JsonArray a) || a.size() > MAX_BLOCKS) {
            throw new ProtocolException(where + ".block_hashes must be an array of at most " + MAX_BLOCKS + " hashes");
        }
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(a.getValue(i) instanceof Number n) || n.doubleValue() != n.longValue()) {
                throw new ProtocolException(where + ".block_hashes must hold integers");
            }
            out[i] = n.longValue();
        }
        return out;
    }
}
