package dev.tandem.upstream.kvevents;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** vLLM's and SGLang's {@code KVEventBatch} in both msgspec encodings, as their publishers write them. */
class EngineKvBatchDecoderTest {

    @Test
    void theTaggedArrayEncodingOfOlderVllmAndSglang() {
        // [ts, [["BlockStored", hashes, parent, tokens, block_size, lora_id], ["BlockRemoved", hashes],
        // ["AllBlocksCleared"]]]
        byte[] payload = MsgPack.pack(p -> {
            p.packArrayHeader(2).packDouble(1764676800.25).packArrayHeader(3);
            p.packArrayHeader(6).packString("BlockStored");
            p.packArrayHeader(2).packLong(-5).packBigInteger(new BigInteger("18446744073709551615"));
            p.packLong(42);
            p.packArrayHeader(4).packInt(1).packInt(2).packInt(3).packInt(4);
            p.packInt(2).packNil();
            p.packArrayHeader(2).packString("BlockRemoved").packArrayHeader(1).packLong(-5);
            p.packArrayHeader(1).packString("AllBlocksCleared");
        });
        EngineKvBatch batch = EngineKvBatchDecoder.decode(7, payload);
        assertEquals(7, batch.seq());
        assertEquals(1764676800.25, batch.timestamp());
        EngineKvEvent.Stored stored =
                assertInstanceOf(EngineKvEvent.Stored.class, batch.events().get(0));
        assertArrayEquals(new long[] {-5, -1}, stored.hashes(), "an unsigned 64-bit hash keeps its bits");
        assertTrue(stored.hasParent());
        assertEquals(42, stored.parent());
        assertArrayEquals(new int[] {1, 2, 3, 4}, stored.tokens());
        assertEquals(2, stored.blockSize());
        assertArrayEquals(new boolean[] {false, false}, stored.keyed());
        assertFalse(stored.lowerTier());
        assertArrayEquals(
                new long[] {-5},
                assertInstanceOf(EngineKvEvent.Removed.class, batch.events().get(1))
                        .hashes());
        assertInstanceOf(EngineKvEvent.Cleared.class, batch.events().get(2));
    }

    @Test
    void theMapEncodingOfCurrentVllmWithFieldsAddedOverTime() {
        byte[] sha = new byte[32];
        sha[31] = 9;
        byte[] payload = MsgPack.pack(p -> {
            p.packMapHeader(3)
                    .packString("ts")
                    .packDouble(2.5)
                    .packString("events")
                    .packArrayHeader(3);
            p.packMapHeader(11).packString("type").packString("BlockStored");
            p.packString("block_hashes").packArrayHeader(1).packBinaryHeader(32).writePayload(sha);
            p.packString("parent_block_hash").packNil();
            p.packString("token_ids").packArrayHeader(2).packInt(5).packInt(6);
            p.packString("block_size").packInt(2);
            p.packString("lora_id").packNil();
            p.packString("medium").packString("CPU");
            p.packString("lora_name").packNil();
            p.packString("extra_keys").packArrayHeader(1).packNil();
            p.packString("group_idx").packInt(0);
            p.packString("something_newer").packMapHeader(1).packString("x").packInt(1);
            // A sliding-window group's copy of the same store: left out.
            p.packMapHeader(3).packString("type").packString("BlockRemoved");
            p.packString("block_hashes").packArrayHeader(1).packInt(3);
            p.packString("group_idx").packInt(1);
            p.packMapHeader(2).packString("type").packString("BlockRemoved");
            p.packString("block_hashes").packArrayHeader(1).packBinaryHeader(32).writePayload(sha);
            p.packString("data_parallel_rank").packInt(0);
        });
        EngineKvBatch batch = EngineKvBatchDecoder.decode(0, payload);
        assertEquals(2, batch.events().size(), "the group-1 event is left out");
        EngineKvEvent.Stored stored =
                assertInstanceOf(EngineKvEvent.Stored.class, batch.events().get(0));
        assertFalse(stored.hasParent());
        assertTrue(stored.lowerTier(), "medium CPU is the lower tier");
        EngineKvEvent.Removed removed =
                assertInstanceOf(EngineKvEvent.Removed.class, batch.events().get(1));
        assertArrayEquals(stored.hashes(), removed.hashes(), "the same bytes name the same block");
        assertNotEquals(0, stored.hashes()[0]);
    }

    @Test
    void blocksUnderAnAdapterOrExtraKeysAreKeyed() {
        byte[] payload = MsgPack.pack(p -> {
            p.packArrayHeader(2).packDouble(0).packArrayHeader(2);
            p.packArrayHeader(7)
                    .packString("BlockStored")
                    .packArrayHeader(2)
                    .packInt(1)
                    .packInt(2)
                    .packNil();
            p.packArrayHeader(2).packInt(1).packInt(2).packInt(1).packInt(3).packString("GPU");
            p.packArrayHeader(9)
                    .packString("BlockStored")
                    .packArrayHeader(2)
                    .packInt(3)
                    .packInt(4)
                    .packNil();
            p.packArrayHeader(2)
                    .packInt(1)
                    .packInt(2)
                    .packInt(1)
                    .packNil()
                    .packString("GPU")
                    .packNil();
            p.packArrayHeader(2).packNil().packArrayHeader(1).packString("cache_salt");
        });
        EngineKvBatch batch = EngineKvBatchDecoder.decode(0, payload);
        assertArrayEquals(
                new boolean[] {true, true},
                ((EngineKvEvent.Stored) batch.events().get(0)).keyed(),
                "lora_id 3");
        assertArrayEquals(
                new boolean[] {false, true},
                ((EngineKvEvent.Stored) batch.events().get(1)).keyed(),
                "extra keys on the second block only");
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
                Arguments.of("not msgpack", new byte[] {(byte) 0xc1}),
                Arguments.of("a bare number", MsgPack.pack(p -> p.packInt(3))),
                Arguments.of(
                        "events not an array",
                        MsgPack.pack(p -> p.packArrayHeader(2).packDouble(0).packInt(1))),
                Arguments.of(
                        "an unknown tag",
                        MsgPack.pack(p -> p.packArrayHeader(2)
                                .packDouble(0)
                                .packArrayHeader(1)
                                .packArrayHeader(1)
                                .packString("X"))),
                Arguments.of("tokens that do not fill the blocks", MsgPack.pack(p -> {
                    p.packArrayHeader(2).packDouble(0).packArrayHeader(1);
                    p.packArrayHeader(6)
                            .packString("BlockStored")
                            .packArrayHeader(1)
                            .packInt(1)
                            .packNil();
                    p.packArrayHeader(3)
                            .packInt(1)
                            .packInt(2)
                            .packInt(3)
                            .packInt(2)
                            .packNil();
                })),
                Arguments.of("a negative token id", MsgPack.pack(p -> {
                    p.packArrayHeader(2).packDouble(0).packArrayHeader(1);
                    p.packArrayHeader(6)
                            .packString("BlockStored")
                            .packArrayHeader(1)
                            .packInt(1)
                            .packNil();
                    p.packArrayHeader(1).packInt(-1).packInt(1).packNil();
                })),
                Arguments.of("a hash that is a map", MsgPack.pack(p -> {
                    p.packArrayHeader(2).packDouble(0).packArrayHeader(1);
                    p.packArrayHeader(2)
                            .packString("BlockRemoved")
                            .packArrayHeader(1)
                            .packMapHeader(0);
                })),
                Arguments.of(
                        "bytes after the batch",
                        MsgPack.pack(p -> p.packArrayHeader(2)
                                .packDouble(0)
                                .packArrayHeader(0)
                                .packInt(1))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void aMalformedBatchIsRefusedWithAReason(String name, byte[] payload) {
        KvEventFormatException e =
                assertThrows(KvEventFormatException.class, () -> EngineKvBatchDecoder.decode(1, payload));
        assertFalse(e.getMessage().isBlank());
    }
}
