package dev.tandem.engine.gguf;

import dev.tandem.engine.HalfFloats;
import java.nio.ByteBuffer;

/**
 * Block formats to floats, block by block, as llama.cpp's reference {@code dequantize_row_*} computes
 * them (ggml-quants.c): the same operations in the same order, so each value has the same bits. The
 * engine multiplies weights a block at a time through these; no whole tensor is ever expanded.
 */
public final class GgmlDequant {
    private GgmlDequant() {}

    /**
     * Writes the {@code count} elements of {@code type} starting at element {@code first} of the tensor
     * in {@code data} (absolute indexing; {@code first} and {@code count} whole blocks) to {@code out}.
     */
    public static void row(GgmlType type, ByteBuffer data, long first, int count, float[] out, int outOffset) {
        int per = type.blockElements();
        if (first % per != 0 || count % per != 0) {
            throw new IllegalArgumentException(type + " is read in whole blocks of " + per);
        }
        long blockStart = first / per * type.blockBytes();
        for (int b = 0; b < count / per; b++) {
            int at = Math.toIntExact(blockStart + (long) b * type.blockBytes());
            int o = outOffset + b * per;
            switch (type) {
                case F32 -> out[o] = data.getFloat(at);
                case F16 -> out[o] = HalfFloats.half(data.getShort(at));
                case BF16 -> out[o] = HalfFloats.bfloat16(data.getShort(at));
                case Q8_0 -> q8_0(data, at, out, o);
                case Q4_0 -> q4_0(data, at, out, o);
                case Q5_0 -> q5_0(data, at, out, o);
                case Q4_K -> q4_K(data, at, out, o);
                case Q6_K -> q6_K(data, at, out, o);
                default -> throw new GgufFormatException("tensors of type " + type + " are not supported");
            }
        }
    }

    /** {@code d} (half), then 32 signed bytes: {@code d × q}. */
    static void q8_0(ByteBuffer x, int at, float[] y, int o) {
        float d = HalfFloats.half(x.getShort(at));
        for (int j = 0; j < 32; j++) {
            y[o + j] = x.get(at + 2 + j) * d;
        }
    }

    /** {@code d} (half), then 16 bytes of two nibbles: low nibbles are elements 0–15, high 16–31, each minus 8. */
    static void q4_0(ByteBuffer x, int at, float[] y, int o) {
        float d = HalfFloats.half(x.getShort(at));
        for (int j = 0; j < 16; j++) {
            int q = x.get(at + 2 + j) & 0xFF;
            y[o + j] = ((q & 0x0F) - 8) * d;
            y[o + j + 16] = ((q >>> 4) - 8) * d;
        }
    }

    /** {@code d} (half), 32 high bits, 16 bytes of low nibbles: each 5-bit value minus 16, times d. */
    static void q5_0(ByteBuffer x, int at, float[] y, int o) {
        float d = HalfFloats.half(x.getShort(at));
        int qh = x.getInt(at + 2);
        for (int j = 0; j < 16; j++) {
            int q = x.get(at + 6 + j) & 0xFF;
            int h0 = ((qh >>> j) << 4) & 0x10;
            int h1 = (qh >>> (j + 12)) & 0x10;
            y[o + j] = (((q & 0x0F) | h0) - 16) * d;
            y[o + j + 16] = (((q >>> 4) | h1) - 16) * d;
        }
    }

    /**
     * {@code d} and {@code dmin} (halves), 12 bytes of eight 6-bit scales and mins, 128 bytes of nibbles:
     * each 64 elements take two scale/min pairs, the low nibbles of 32 bytes then their high nibbles.
     */
    static void q4_K(ByteBuffer x, int at, float[] y, int o) {
        float d = HalfFloats.half(x.getShort(at));
        float min = HalfFloats.half(x.getShort(at + 2));
        byte[] sc = new byte[12];
        x.get(at + 4, sc);
        int q = at + 16;
        int is = 0;
        for (int j = 0; j < 256; j += 64) {
            float d1 = d * GgmlKQuants.scale(sc, 0, is);
            float m1 = min * GgmlKQuants.min(sc, 0, is);
            float d2 = d * GgmlKQuants.scale(sc, 0, is + 1);
            float m2 = min * GgmlKQuants.min(sc, 0, is + 1);
            for (int l = 0; l < 32; l++) {
                y[o + j + l] = d1 * (x.get(q + l) & 0x0F) - m1;
            }
            for (int l = 0; l < 32; l++) {
                y[o + j + 32 + l] = d2 * ((x.get(q + l) & 0xFF) >>> 4) - m2;
            }
            q += 32;
            is += 2;
        }
    }

    /**
     * 128 bytes of low nibbles, 64 bytes of 2-bit highs, 16 signed 8-bit scales, then {@code d} (half):
     * each value is a 6-bit number minus 32, times {@code d} times its 16 elements' scale.
     */
    static void q6_K(ByteBuffer x, int at, float[] y, int o) {
        float d = HalfFloats.half(x.getShort(at + 208));
        int ql = at;
        int qh = at + 128;
        int sc = at + 192;
        for (int n = 0; n < 256; n += 128) {
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int low0 = x.get(ql + l) & 0xFF;
                int low32 = x.get(ql + l + 32) & 0xFF;
                int high = x.get(qh + l) & 0xFF;
                int q1 = ((low0 & 0x0F) | ((high & 3) << 4)) - 32;
                int q2 = ((low32 & 0x0F) | (((high >>> 2) & 3) << 4)) - 32;
                int q3 = ((low0 >>> 4) | (((high >>> 4) & 3) << 4)) - 32;
                int q4 = ((low32 >>> 4) | (((high >>> 6) & 3) << 4)) - 32;
                y[o + n + l] = d * x.get(sc + is) * q1;
                y[o + n + l + 32] = d * x.get(sc + is + 2) * q2;
                y[o + n + l + 64] = d * x.get(sc + is + 4) * q3;
                y[o + n + l + 96] = d * x.get(sc + is + 6) * q4;
            }
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}
