package dev.tandem.upstream.kvevents;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;

/**
 * Reads the msgpack payload of a vLLM or SGLang KV event message. Both encodings their msgspec structs
 * have had are accepted: tagged arrays ({@code array_like=True}: {@code ["BlockStored", hashes, parent,
 * tokens, block_size, lora_id, medium, lora_name, extra_keys, group_idx, …]}, the batch as
 * {@code [ts, events, dp_rank]}) and maps with a {@code type} tag; fields an engine added later (or adds
 * next) are ignored when unknown. Events of a KV cache group other than the first ({@code group_idx > 0},
 * a hybrid model's sliding-window layers) are left out: the first group's blocks say what a prompt hits.
 * Anything else malformed is a {@link KvEventFormatException}, naming what.
 */
public final class EngineKvBatchDecoder {
    /** The most events in one batch and blocks in one event: beyond, the message is refused. */
    static final int MAX_EVENTS = 100_000;

    static final int MAX_BLOCKS = 1 << 20;

    private static final String GPU = "GPU";
    private static final List<String> STORED_FIELDS = List.of(
            "block_hashes",
            "parent_block_hash",
            "token_ids",
            "block_size",
            "lora_id",
            "medium",
            "lora_name",
            "extra_keys",
            "group_idx");
    private static final List<String> REMOVED_FIELDS = List.of("block_hashes", "medium", "group_idx");

    private EngineKvBatchDecoder() {}

    /** Decodes one message's payload; {@code seq} is its second frame. */
    public static EngineKvBatch decode(long seq, byte[] payload) {
        Value batch;
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload)) {
            batch = unpacker.unpackValue();
            if (unpacker.hasNext()) {
                throw new KvEventFormatException("bytes after the batch");
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof KvEventFormatException k) {
                throw k;
            }
            throw new KvEventFormatException("not msgpack: " + e.getMessage());
        }
        Value ts;
        Value events;
        if (batch.isArrayValue() && batch.asArrayValue().size() >= 2) {
            ts = batch.asArrayValue().get(0);
            events = batch.asArrayValue().get(1);
        } else if (batch.isMapValue()) {
            Map<Value, Value> map = batch.asMapValue().map();
            ts = map.get(ValueFactory.newString("ts"));
            events = map.get(ValueFactory.newString("events"));
        } else {
            throw new KvEventFormatException("a batch is [ts, events, ...] or {ts, events, ...}");
        }
        if (ts == null || !ts.isNumberValue()) {
            throw new KvEventFormatException("the batch's ts must be a number");
        }
        if (events == null || !events.isArrayValue() || events.asArrayValue().size() > MAX_EVENTS) {
            throw new KvEventFormatException("the batch's events must be an array of at most " + MAX_EVENTS);
        }
        List<EngineKvEvent> out = new ArrayList<>();
        int i = 0;
        for (Value e : events.asArrayValue()) {
            EngineKvEvent event = event(e, "events[" + i++ + "]");
            if (event != null) {
                out.add(event);
            }
        }
        double timestamp = ts.isFloatValue()
                ? ts.asFloatValue().toDouble()
                : ts.asIntegerValue().toDouble();
        return new EngineKvBatch(seq, timestamp, out);
    }

    /** One event; null for one of another KV cache group. */
    private static EngineKvEvent event(Value e, String where) {
        Fields f = Fields.of(e, where);
        return switch (f.tag()) {
            case "BlockStored" -> {
                Fields s = f.named(STORED_FIELDS);
                yield s.group() > 0 ? null : stored(s, where);
            }
            case "BlockRemoved" -> {
                Fields r = f.named(REMOVED_FIELDS);
                yield r.group() > 0 ? null : new EngineKvEvent.Removed(hashes(r.get("block_hashes"), where), lower(r));
            }
            case "AllBlocksCleared" -> new EngineKvEvent.Cleared();
            default ->
                throw new KvEventFormatException(
                        where + " is a '" + f.tag() + "': expected BlockStored, BlockRemoved or AllBlocksCleared");
        };
    }

    private static EngineKvEvent.Stored stored(Fields f, String where) {
        long[] hashes = hashes(f.get("block_hashes"), where);
        Value parent = f.get("parent_block_hash");
        boolean hasParent = parent != null && !parent.isNilValue();
        Value size = f.get("block_size");
        if (size == null || !size.isIntegerValue() || !size.asIntegerValue().isInIntRange()) {
            throw new KvEventFormatException(where + ".block_size must be an integer");
        }
        int blockSize = size.asIntegerValue().toInt();
        if (blockSize < 1) {
            throw new KvEventFormatException(where + ".block_size must be at least 1");
        }
        int[] tokens = tokens(f.get("token_ids"), where);
        if ((long) hashes.length * blockSize != tokens.length) {
            throw new KvEventFormatException(
                    where + " has " + tokens.length + " token ids for " + hashes.length + " blocks of " + blockSize);
        }
        boolean adapter = present(f.get("lora_id")) || present(f.get("lora_name"));
        boolean[] keyed = new boolean[hashes.length];
        Value extra = f.get("extra_keys");
        for (int b = 0; b < keyed.length; b++) {
            keyed[b] = adapter
                    || (extra != null
                            && extra.isArrayValue()
                            && b < extra.asArrayValue().size()
                            && present(extra.asArrayValue().get(b)));
        }
        return new EngineKvEvent.Stored(
                hashes,
                hasParent,
                hasParent ? hash(parent, where + ".parent_block_hash") : 0,
                tokens,
                blockSize,
                keyed,
                lower(f));
    }

    private static boolean lower(Fields f) {
        Value medium = f.get("medium");
        return medium != null
                && medium.isStringValue()
                && !GPU.equalsIgnoreCase(medium.asStringValue().asString());
    }

    private static boolean present(Value v) {
        return v != null
                && !v.isNilValue()
                && !(v.isArrayValue() && v.asArrayValue().size() == 0);
    }

    private static long[] hashes(Value v, String where) {
        if (v == null || !v.isArrayValue() || v.asArrayValue().size() > MAX_BLOCKS) {
            throw new KvEventFormatException(where + ".block_hashes must be an array of at most " + MAX_BLOCKS);
        }
        long[] out = new long[v.asArrayValue().size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = hash(v.asArrayValue().get(i), where + ".block_hashes[" + i + "]");
        }
        return out;
    }

    /**
     * An engine block hash as 64 bits: an integer's low 64 bits (vLLM's and SGLang's ints, signed or
     * unsigned), or bytes (vLLM's SHA-256 hashes) folded by FNV-1a — it only has to name the block.
     */
    static long hash(Value v, String where) {
        if (v.isIntegerValue()) {
            return v.asIntegerValue().asBigInteger().longValue();
        }
        byte[] bytes;
        if (v.isBinaryValue()) {
            bytes = v.asBinaryValue().asByteArray();
        } else if (v.isStringValue()) {
            bytes = v.asStringValue().asByteArray();
        } else {
            throw new KvEventFormatException(where + " must be an integer or bytes");
        }
        long h = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return h;
    }

    private static int[] tokens(Value v, String where) {
        if (v == null || !v.isArrayValue()) {
            throw new KvEventFormatException(where + ".token_ids must be an array");
        }
        int[] out = new int[v.asArrayValue().size()];
        for (int i = 0; i < out.length; i++) {
            Value t = v.asArrayValue().get(i);
            if (!t.isIntegerValue()
                    || !t.asIntegerValue().isInIntRange()
                    || t.asIntegerValue().toInt() < 0) {
                throw new KvEventFormatException(where + ".token_ids must hold token ids (integers, 0 or more)");
            }
            out[i] = t.asIntegerValue().toInt();
        }
        return out;
    }
}
