package dev.tandem.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every JSON wire record survives encode → wire text → decode → encode unchanged, and rejects a broken shape. */
class WireCodecRoundTripTest {
    private static final Sampling SAMPLING = new Sampling(0.7, 0.9, 40, -1234567890123L);

    static Stream<Arguments> records() {
        return Stream.of(
                Arguments.of(
                        "PrefillRequest",
                        PrefillRequest.CODEC,
                        new PrefillRequest(Long.MAX_VALUE, new int[] {256, 72, 105}, "decode-1", SAMPLING, "node-7", 3),
                        "prompt_tokens"),
                Arguments.of("PrefillDone", PrefillDone.CODEC, new PrefillDone(7, 42, 3, 98304, 1500), "first_token"),
                Arguments.of(
                        "PrefillDone(cached)",
                        PrefillDone.CODEC,
                        new PrefillDone(7, 42, 64, 4096, 900, 48),
                        "kv_bytes"),
                Arguments.of(
                        "PrefillRequest(decode cache)",
                        PrefillRequest.CODEC,
                        new PrefillRequest(5, new int[] {256, 1, 2}, "decode-1", SAMPLING, "node-7", 2, 3, null),
                        "decode_worker"),
                Arguments.of("KvAck(need)", KvAck.CODEC, new KvAck(7, 512, 48, 2), "tokens"),
                Arguments.of(
                        "PrefillRequest(router id)",
                        PrefillRequest.CODEC,
                        new PrefillRequest(5, new int[] {256, 1}, "decode-1", SAMPLING, "node-7", 1, -1, "router-3f"),
                        "prompt_tokens"),
                Arguments.of(
                        "FirstToken", FirstToken.CODEC, new FirstToken(Long.MIN_VALUE, 2, "prefill-1", 31999), "token"),
                Arguments.of(
                        "PrefillDone(no first token)",
                        PrefillDone.CODEC,
                        new PrefillDone(7, PrefillDone.NO_FIRST_TOKEN, 3, 0, 1500, 0),
                        "prompt_tokens"),
                Arguments.of(
                        "KvHandle",
                        KvHandle.CODEC,
                        new KvHandle(
                                Long.MAX_VALUE,
                                2,
                                new int[] {0, 51, 72},
                                new io.vertx.core.json.JsonObject()
                                        .put("do_remote_prefill", true)
                                        .put("remote_block_ids", new io.vertx.core.json.JsonArray().add(17))
                                        .put("remote_engine_id", "3f1c9a2e")
                                        .putNull("remote_host")
                                        .put("remote_port", 5600)),
                        "prompt_tokens"),
                Arguments.of(
                        "KvCacheEvents",
                        KvCacheEvents.CODEC,
                        new KvCacheEvents(
                                "prefill-1", 9, 1764676800123L, new long[] {Long.MIN_VALUE, -1, 7}, new long[] {
                                    Long.MAX_VALUE
                                }),
                        "stored"),
                Arguments.of(
                        "KvCacheSnapshot",
                        KvCacheSnapshot.CODEC,
                        new KvCacheSnapshot("decode-2", 0, new long[] {123456789012345L}),
                        "blocks"),
                Arguments.of(
                        "KvCacheEvents(lower tier)",
                        KvCacheEvents.CODEC,
                        new KvCacheEvents(
                                "prefill-1", 3, 17L, new long[] {1}, new long[0], new long[] {-5, 6}, new long[] {9}),
                        "stored"),
                Arguments.of(
                        "KvCacheSnapshot(lower tier)",
                        KvCacheSnapshot.CODEC,
                        new KvCacheSnapshot("prefill-1", 4, new long[] {1}, new long[] {Long.MIN_VALUE}),
                        "blocks"),
                Arguments.of("CacheSpec", CacheSpec.CODEC, new CacheSpec(16, true), "block_size"),
                Arguments.of(
                        "CacheSpec(block bytes)", CacheSpec.CODEC, new CacheSpec(16, false, 327_680), "block_size"),
                Arguments.of(
                        "WorkerDescriptor(cache)",
                        WorkerDescriptor.CODEC,
                        new WorkerDescriptor(
                                "decode-1",
                                WorkerRole.DECODE,
                                "m",
                                5,
                                "node",
                                64,
                                false,
                                WorkerLoad.IDLE,
                                new CacheSpec(16, true)),
                        "max_batch"),
                Arguments.of(
                        "ModelCard",
                        ModelCard.CODEC,
                        new ModelCard(4096, "sha256:0123456789abcdef", "llama2"),
                        "context_length"),
                Arguments.of(
                        "ModelCard(own template)",
                        ModelCard.CODEC,
                        new ModelCard(
                                8192,
                                "sha256:0123456789abcdef",
                                "Qwen2.5-7B-Instruct",
                                "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}",
                                java.util.Map.of("eos_token", "<|im_end|>")),
                        "context_length"),
                Arguments.of(
                        "WorkerDescriptor(cache, card)",
                        WorkerDescriptor.CODEC,
                        new WorkerDescriptor(
                                "prefill-1",
                                WorkerRole.PREFILL,
                                "m",
                                5,
                                "node",
                                1,
                                false,
                                WorkerLoad.IDLE,
                                new CacheSpec(16, false),
                                new ModelCard(256, "sha256:0123456789abcdef", "role-tags")),
                        "model_fingerprint"),
                Arguments.of("KvAck", KvAck.CODEC, new KvAck(7, 98304, 3), "bytes"),
                Arguments.of(
                        "DecodeRequest",
                        DecodeRequest.CODEC,
                        new DecodeRequest(9, 42, 16, SAMPLING, new int[] {257}, "router-1", "node-7", 2),
                        "sampling"),
                Arguments.of(
                        "TokenEvent", TokenEvent.CODEC, new TokenEvent(9, 3, new int[] {1, 2}, "length", null), "seq"),
                Arguments.of(
                        "TokenEvent(error)",
                        TokenEvent.CODEC,
                        new TokenEvent(9, 0, new int[0], null, "boom"),
                        "tokens"),
                Arguments.of(
                        "TokenBatch",
                        TokenBatch.CODEC,
                        new TokenBatch(
                                "decode-1",
                                List.of(
                                        new TokenEvent(1, 5, new int[] {10}, null, null),
                                        new TokenEvent(2, 9, new int[0], "stop", null))),
                        "events"),
                Arguments.of("CancelRequest", CancelRequest.CODEC, new CancelRequest(3, "client_closed"), "request_id"),
                Arguments.of("CancelRequest(attempt)", CancelRequest.CODEC, new CancelRequest(3, "moved", 2), "reason"),
                Arguments.of(
                        "WorkerDescriptor",
                        WorkerDescriptor.CODEC,
                        new WorkerDescriptor(
                                "prefill-1",
                                WorkerRole.PREFILL,
                                "tandem-builtin",
                                0x1234_5678_9abcL,
                                "node",
                                4,
                                true,
                                new WorkerLoad(300, 0, 0, 0)),
                        "role"),
                Arguments.of(
                        "WorkerLoad",
                        WorkerLoad.CODEC,
                        new WorkerLoad(12, 5, 1L << 33, 1L << 34, 987654321L),
                        "kv_bytes_used"),
                Arguments.of(
                        "WorkerLoad(holdings)",
                        WorkerLoad.CODEC,
                        new WorkerLoad(0, 3, 65536, 1L << 30, 7, 1, 2, 3),
                        "active_sequences"),
                Arguments.of(
                        "WorkerLoad(prefill rate)",
                        WorkerLoad.CODEC,
                        WorkerLoad.prefill(4096, 2).withPrefillRate(28_123.5),
                        "queued_prefill_tokens"),
                Arguments.of(
                        "WorkerLoad(prefill and KV transfer rates)",
                        WorkerLoad.CODEC,
                        WorkerLoad.prefill(4096, 2).withPrefillRate(28_123.5).withKvTransferRate(2.0e11),
                        "queued_prefill_tokens"),
                Arguments.of(
                        "WorkerView",
                        WorkerView.CODEC,
                        new WorkerView(
                                new WorkerDescriptor(
                                        "decode-1",
                                        WorkerRole.DECODE,
                                        "tandem-builtin",
                                        -9L,
                                        "node",
                                        64,
                                        false,
                                        new WorkerLoad(0, 3, 65536, 1L << 30, 7, 0, 1, 2)),
                                5),
                        "in_flight"),
                Arguments.of(
                        "RouterLoad",
                        RouterLoad.CODEC,
                        new RouterLoad("router-1", "node-7", 12, java.util.Map.of("prefill-1", 3, "decode-2", 1)),
                        "in_flight"),
                Arguments.of(
                        "RouterLoad(token rates)",
                        RouterLoad.CODEC,
                        new RouterLoad(
                                "router-1",
                                "node-7",
                                2,
                                java.util.Map.of("prefill-1", 2),
                                java.util.Map.of("prefill-1", 900L),
                                java.util.Map.of("llama", new RouterLoad.TokenRates(51_234.5, 1_817.25))),
                        "in_flight"),
                Arguments.of("Sampling", SamplingCodec.INSTANCE, SAMPLING, "top_p"),
                Arguments.of(
                        "WorkerJoin",
                        WorkerJoin.CODEC,
                        new WorkerJoin(WorkerRole.DECODE, "tandem-builtin", -77L, 16, "py-decode-1", "secret"),
                        "model_fingerprint"),
                Arguments.of(
                        "WorkerJoin(unnamed)",
                        WorkerJoin.CODEC,
                        new WorkerJoin(WorkerRole.PREFILL, "m", 1, 1, null, null),
                        "role"),
                Arguments.of(
                        "WorkerWelcome",
                        WorkerWelcome.CODEC,
                        new WorkerWelcome(
                                "py-decode-1",
                                "node-7",
                                250,
                                3000,
                                new WorkerWelcome.ModelSpec("tandem-builtin", 512, 256, 1, 2, List.of(1, 2)),
                                List.of("tandem.decode.py-decode-1.kv", "tandem.worker.py-decode-1.status")),
                        "addresses"),
                Arguments.of(
                        "WorkerHeartbeat",
                        WorkerHeartbeat.CODEC,
                        new WorkerHeartbeat(new WorkerLoad(0, 3, 4096, 1 << 20, 99), true),
                        "load"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("records")
    <T> void roundTrips(String name, JsonCodec<T> codec, T value, String requiredField) {
        JsonObject encoded = codec.encode(value);
        T decoded = codec.decode(new JsonObject(encoded.encode()));
        assertEquals(encoded, codec.encode(decoded), name + " changed on the way");
    }

    @org.junit.jupiter.api.Test
    void aDescriptorWithoutLoadIsIdle() {
        JsonObject json = WorkerDescriptor.CODEC.encode(
                new WorkerDescriptor("w", WorkerRole.DECODE, "m", 1, "n", 1, false, new WorkerLoad(1, 2, 3, 4)));
        json.remove("load");
        assertEquals(WorkerLoad.IDLE, WorkerDescriptor.CODEC.decode(json).load());
    }

    @ParameterizedTest(name = "{0} without {3}")
    @MethodSource("records")
    <T> void rejectsAMissingField(String name, JsonCodec<T> codec, T value, String requiredField) {
        JsonObject encoded = codec.encode(value);
        encoded.remove(requiredField);
        assertThrows(ProtocolException.class, () -> codec.decode(encoded));
    }

    @ParameterizedTest(name = "{0} with a mistyped {3}")
    @MethodSource("records")
    <T> void rejectsAMistypedField(String name, JsonCodec<T> codec, T value, String requiredField) {
        JsonObject encoded = codec.encode(value);
        encoded.put(requiredField, new JsonObject().put("not", "this"));
        assertThrows(ProtocolException.class, () -> codec.decode(encoded));
    }
}
