package dev.tandem.engine.gguf;

/**
 * The dot products of a weight row with an activation vector, in ggml's structure: integer sums inside a
 * block, scaled by the block's float scales into eight lanes (lane k takes the elements j with j mod 8 =
 * k), the lanes added in order at the end. The integers travel as floats: every product, block sum and
 * scaled K-quant sum is an integer below 2^24, so float arithmetic keeps them exact (and runs on the
 * fast units). Every implementation gives exactly these bits: each lane adds with one fused multiply-add
 * per block, so the Vector API kernel and the
 * plain loops agree — a GGUF model's tokens do not depend on the JVM's flags. {@link #ACTIVE} is the
 * Vector API kernel when the JVM runs with {@code --add-modules jdk.incubator.vector}, else the plain one;
 * {@code -Dtandem.matmul=scalar} forces the plain one.
 */
interface GgmlDotKernel {
    int LANES = 8;

    /** Blocks of 32 (Q8_0, Q4_0, Q5_0 against Q8_0 activations): Σ_b (Σ q·y) · (d[b] · yd[b]). */
    float blocks32(float[] q, float[] d, float[] y, float[] yd, int blocks);

    /**
     * {@link #blocks32} straight from a Q8_0 row's bytes (34-byte blocks: f16 d, 32 signed bytes): one
     * stream reads each row once, so unpacking it first would cost as much as the product.
     */
    float q8_0Row(byte[] row, float[] y, float[] yd, int blocks);

    /** Q4_K against Q8_K: Σ_b d[b]·yd[b]·Σ_s scale·(Σ q·y) − Σ_b dmin[b]·yd[b]·Σ_s min·(sums of y). */
    float q4K(
            float[] q, float[] d, float[] dmin, int[] scale, int[] min, float[] y, float[] yd, int[] ysums, int blocks);

    /** Q6_K against Q8_K: Σ_b d[b]·yd[b]·Σ_g scale·(Σ q·y), groups of 16. */
    float q6K(float[] q, float[] d, int[] scale, float[] y, float[] yd, int blocks);

    /** Float rows (F32, F16 and BF16 values against their activations): Σ w·x, n a multiple of 8. */
    float floats(float[] w, float[] x, int n);

    /**
     * Unpacks {@code n} (a multiple of 8) quantized values into floats: q[o + i] = ((row[lowAt + i] >>> lowShift)
     * & 0xF | ((row[highAt + i] >>> highShift) & 3) << 4) − bias, without the high part when highAt < 0
     * (Q4_0 and Q4_K nibbles, Q6_K's four quarters).
     */
    void unpack(byte[] row, int lowAt, int lowShift, int highAt, int highShift, int bias, float[] q, int o, int n);

    /** A Q5_0 block's 32 values (its 32 high bits at {@code at}, 16 bytes of nibbles after) into q[o, o + 32). */
    void unpackQ5(byte[] row, int at, float[] q, int o);

    /** {@code n} (a multiple of 8) f16 or bf16 values, little-endian from {@code row[0]}, as floats (exact). */
    void halves(byte[] row, float[] out, int n, boolean bf16);

    String describe();

    GgmlDotKernel ACTIVE = select(System.getProperty("tandem.matmul", "auto"));

    static GgmlDotKernel select(String wanted) {
        if ("scalar".equals(wanted)
                || ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return GgmlScalarDot.INSTANCE;
        }
        try {
            return GgmlVectorDot.create();
        } catch (LinkageError e) {
            return GgmlScalarDot.INSTANCE;
        }
    }

    /** The lanes added in order: ((l0 + l1) + l2) + … */
    static float sumLanes(float[] lanes) {
        float s = 0;
        for (float l : lanes) {
            s += l;
        }
        return s;
    }
}
