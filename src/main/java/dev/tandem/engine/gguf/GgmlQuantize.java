package dev.tandem.engine.gguf;

import dev.tandem.engine.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Floats to a tensor's bytes as llama.cpp's reference quantizers write them ({@code
 * quantize_row_q8_0_ref}, {@code quantize_row_q4_0_ref} in ggml-quants.c; F16 and BF16 rounded to
 * nearest even), for the models tests and benchmarks write; Q5_0 and the K-quants in {@link GgmlBlockQuantize}.
 */
public final class GgmlQuantize {
    private GgmlQuantize() {}

    /** {@code values} (a whole number of blocks) in {@code type}'s bytes. */
    public static byte[] quantize(GgmlType type, float[] values) {
        ByteBuffer out =
                ByteBuffer.allocate(Math.toIntExact(type.bytes(values.length))).order(ByteOrder.LITTLE_ENDIAN);
        switch (type) {
            case F32 -> {
                for (float v : values) {
                    out.putFloat(v);
                }
            }
            case F16 -> {
                for (float v : values) {
                    out.putShort(HalfFloats.toHalf(v));
                }
            }
            case BF16 -> {
                for (float v : values) {
                    out.putShort(HalfFloats.toBfloat16(v));
                }
            }
            case Q8_0 -> {
                for (int b = 0; b < values.length; b += 32) {
                    q8_0(values, b, out);
                }
            }
            case Q4_0 -> {
                for (int b = 0; b < values.length; b += 32) {
                    q4_0(values, b, out);
                }
            }
            case Q5_0 -> blocks(values, 32, out, GgmlBlockQuantize::q5_0);
            case Q4_K -> blocks(values, 256, out, GgmlBlockQuantize::q4K);
            case Q6_K -> blocks(values, 256, out, GgmlBlockQuantize::q6K);
            default -> throw new IllegalArgumentException("writing " + type + " is not supported");
        }
        return out.array();
    }

    /** How one block is written. */
    private interface BlockWriter {
        void write(float[] x, int at, ByteBuffer out);
    }

    private static void blocks(float[] values, int per, ByteBuffer out, BlockWriter writer) {
        for (int b = 0; b < values.length; b += per) {
            writer.write(values, b, out);
        }
    }

    private static void q8_0(float[] x, int at, ByteBuffer out) {
        float amax = 0;
        for (int j = 0; j < 32; j++) {
            amax = Math.max(amax, Math.abs(x[at + j]));
        }
        float d = amax / 127;
        float id = d != 0 ? 1.0f / d : 0.0f;
        out.putShort(HalfFloats.toHalf(d));
        for (int j = 0; j < 32; j++) {
            out.put((byte) roundf(x[at + j] * id));
        }
    }

    /** The value of largest magnitude among x[at, at + 32), with its sign (the first of equals). */
    static float signedMax(float[] x, int at) {
        float amax = 0;
        float max = 0;
        for (int j = 0; j < 32; j++) {
            float v = x[at + j];
            if (amax < Math.abs(v)) {
                amax = Math.abs(v);
                max = v;
            }
        }
        return max;
    }

    private static void q4_0(float[] x, int at, ByteBuffer out) {
        float max = signedMax(x, at);
        float d = max / -8;
        float id = d != 0 ? 1.0f / d : 0.0f;
        out.putShort(HalfFloats.toHalf(d));
        for (int j = 0; j < 16; j++) {
            int xi0 = Math.min(15, (byte) (int) (x[at + j] * id + 8.5f));
            int xi1 = Math.min(15, (byte) (int) (x[at + 16 + j] * id + 8.5f));
            out.put((byte) (xi0 | (xi1 << 4)));
        }
    }

    /** C's {@code roundf}: halves away from zero (Java's {@code Math.round} rounds them up). */
    static float roundf(float v) {
        float a = Math.abs(v);
        float r = (float) Math.floor(a);
        if (a - r >= 0.5f) {
            r += 1;
        }
        return Math.copySign(r, v);
    }
}
