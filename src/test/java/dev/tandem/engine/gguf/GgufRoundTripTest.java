package dev.tandem.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the writer writes, the reader reads back: every value type, arrays, nesting, and tensors at aligned offsets. */
class GgufRoundTripTest {
    @TempDir
    Path dir;

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void metadataOfEveryTypeAndTensorsComeBackAsWritten() throws IOException {
        Path file = dir.resolve("model.gguf");
        byte[] f32 = random(4 * 64 * 3, 1);
        byte[] q8 = random((int) GgmlType.Q8_0.bytes(64 * 2), 2);
        byte[] q4k = random((int) GgmlType.Q4_K.bytes(256 * 2), 3);
        byte[] f16 = random(2 * 32, 4);
        new GgufWriter()
                .put("general.architecture", GgufValue.string("llama"))
                .put("general.name", GgufValue.string("naïve 日本語 👍🏽"))
                .put("llama.context_length", GgufValue.uint32(4096))
                .put("llama.rope.freq_base", GgufValue.float32(500000f))
                .put("tokenizer.ggml.add_bos_token", GgufValue.bool(true))
                .put("u8", GgufValue.of(GgufValueType.UINT8, 255L))
                .put("i8", GgufValue.of(GgufValueType.INT8, -128L))
                .put("u16", GgufValue.of(GgufValueType.UINT16, 65535L))
                .put("i16", GgufValue.of(GgufValueType.INT16, -32768L))
                .put("i32", GgufValue.of(GgufValueType.INT32, -7L))
                .put("u64", GgufValue.of(GgufValueType.UINT64, Long.MAX_VALUE))
                .put("i64", GgufValue.of(GgufValueType.INT64, Long.MIN_VALUE))
                .put("f64", GgufValue.of(GgufValueType.FLOAT64, Math.PI))
                .put("tokenizer.ggml.tokens", GgufValue.array(GgufValueType.STRING, new String[] {"<s>", "▁the", "Ġ", ""
                }))
                .put("tokenizer.ggml.scores", GgufValue.array(GgufValueType.FLOAT32, new float[] {0f, -1.5f, -2f, 3f}))
                .put("tokenizer.ggml.token_type", GgufValue.array(GgufValueType.INT32, new long[] {3, 1, 1, 6}))
                .put("bools", GgufValue.array(GgufValueType.BOOL, new boolean[] {true, false}))
                .put("nested", GgufValue.array(GgufValueType.ARRAY, new GgufValue[] {
                    GgufValue.array(GgufValueType.UINT8, new long[] {1, 2}),
                    GgufValue.array(GgufValueType.STRING, new String[] {"a"})
                }))
                .tensor("token_embd.weight", new long[] {64, 3}, GgmlType.F32, f32)
                .tensor("blk.0.attn_q.weight", new long[] {64, 2}, GgmlType.Q8_0, q8)
                .tensor("blk.0.ffn_down.weight", new long[] {256, 2}, GgmlType.Q4_K, q4k)
                .tensor("output_norm.weight", new long[] {32}, GgmlType.F16, f16)
                .write(file);

        GgufFile g = GgufFile.open(file);
        GgufMetadata m = g.metadata();
        assertEquals(3, g.version());
        assertEquals("llama", m.string("general.architecture"));
        assertEquals("naïve 日本語 👍🏽", m.string("general.name"));
        assertEquals(4096, m.integer("llama.context_length"));
        assertEquals(500000.0, m.number("llama.rope.freq_base"));
        assertEquals(true, m.bool("tokenizer.ggml.add_bos_token", false));
        assertEquals(255, m.integer("u8"));
        assertEquals(-128, m.integer("i8"));
        assertEquals(65535, m.integer("u16"));
        assertEquals(-32768, m.integer("i16"));
        assertEquals(-7, m.integer("i32"));
        assertEquals(Long.MAX_VALUE, m.integer("u64"));
        assertEquals(Long.MIN_VALUE, m.integer("i64"));
        assertEquals(Math.PI, m.number("f64"));
        assertArrayEquals(new String[] {"<s>", "▁the", "Ġ", ""}, m.strings("tokenizer.ggml.tokens"));
        assertArrayEquals(new float[] {0f, -1.5f, -2f, 3f}, m.floats("tokenizer.ggml.scores"));
        assertArrayEquals(new long[] {3, 1, 1, 6}, m.integers("tokenizer.ggml.token_type"));
        assertArrayEquals(
                new boolean[] {true, false}, (boolean[]) m.get("bools").value());
        GgufValue[] nested = (GgufValue[]) m.get("nested").value();
        assertArrayEquals(new long[] {1, 2}, (long[]) nested[0].value());
        assertArrayEquals(new String[] {"a"}, (String[]) nested[1].value());
        assertEquals(GgufValueType.INT16, m.get("i16").type());
        assertEquals(
                List.of("general.architecture", "general.name"),
                List.copyOf(m.keys()).subList(0, 2));

        assertEquals(4, g.tensors().size());
        assertEquals(0, g.dataStart() % 32);
        assertEquals("token_embd.weight", g.tensors().get(0).name());
        assertBytes(f32, g, "token_embd.weight");
        assertBytes(q8, g, "blk.0.attn_q.weight");
        assertBytes(q4k, g, "blk.0.ffn_down.weight");
        assertBytes(f16, g, "output_norm.weight");
        GgufTensorInfo down = g.tensor("blk.0.ffn_down.weight");
        assertArrayEquals(new long[] {256, 2}, down.dims());
        assertEquals(GgmlType.Q4_K, down.type());
        assertEquals(0, down.offset() % 32);
        assertEquals(512, down.elements());
        assertFalse(g.hasTensor("output.weight"));
    }

    private static void assertBytes(byte[] expected, GgufFile g, String tensor) throws IOException {
        ByteBuffer b = g.data(g.tensor(tensor));
        assertEquals(expected.length, b.remaining(), tensor);
        byte[] got = new byte[b.remaining()];
        b.get(got);
        assertArrayEquals(expected, got, tensor);
    }

    @Test
    void aConfiguredAlignmentPlacesEveryTensor() throws IOException {
        Path file = dir.resolve("aligned.gguf");
        new GgufWriter()
                .put(GgufFile.ALIGNMENT_KEY, GgufValue.uint32(64))
                .tensor("a", new long[] {3}, GgmlType.F32, random(12, 5))
                .tensor("b", new long[] {5}, GgmlType.F32, random(20, 6))
                .write(file);
        GgufFile g = GgufFile.open(file);
        assertEquals(0, g.dataStart() % 64);
        assertEquals(64, g.tensor("b").offset());
        assertEquals(g.dataStart() + 64 + 64, Files.size(file));
    }
}
