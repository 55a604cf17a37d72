package dev.tandem.engine;

/**
 * e^x with the exact results of {@link StrictMath#exp} (fdlibm's e_exp.c), in plain Java so the JIT
 * can inline it: on JDK 17 StrictMath.exp is a native call costing ~25 ns, which dominated attention
 * for small models. Bit-identical in every JVM, unlike {@link Math#exp}.
 *
 * <p>Port of e_exp.c from fdlibm 5.3: Copyright (C) 1993 by Sun Microsystems, Inc. All rights
 * reserved. Developed at SunSoft, a Sun Microsystems, Inc. business. Permission to use, copy, modify,
 * and distribute this software is freely granted, provided that this notice is preserved.
 */
public final class StrictExp {
    private static final double HUGE = 1.0e+300;
    private static final double TWOM1000 = 9.33263618503218878990e-302; // 2^-1000
    private static final double O_THRESHOLD = 7.09782712893383973096e+02;
    private static final double U_THRESHOLD = -7.45133219101941108420e+02;
    private static final double LN2_HI = 6.93147180369123816490e-01;
    private static final double LN2_LO = 1.90821492927058770002e-10;
    private static final double INV_LN2 = 1.44269504088896338700e+00;
    private static final double P1 = 1.66666666666666019037e-01;
    private static final double P2 = -2.77777777770155933842e-03;
    private static final double P3 = 6.61375632143793436117e-05;
    private static final double P4 = -1.65339022054652515390e-06;
    private static final double P5 = 4.13813679705723846039e-08;

    private StrictExp() {}

    /** Exactly {@code StrictMath.exp(x)}. */
    public static double exp(double x) {
        long bits = Double.doubleToRawLongBits(x);
        int hx = (int) (bits >>> 32);
        int negative = hx >>> 31;
        hx &= 0x7fffffff; // high word of |x|

        if (hx >= 0x40862E42) { // |x| >= 709.78..., or not finite
            if (hx >= 0x7ff00000) {
                if (((hx & 0xfffff) | (int) bits) != 0) {
                    return x + x; // NaN
                }
                return negative == 0 ? x : 0.0; // e^+inf = inf, e^-inf = 0
            }
            if (x > O_THRESHOLD) {
                return HUGE * HUGE; // overflow
            }
            if (x < U_THRESHOLD) {
                return TWOM1000 * TWOM1000; // underflow
            }
        }

        // argument reduction: x = k ln2 + r, |r| <= 0.5 ln2, r carried as hi - lo
        double hi = 0.0;
        double lo = 0.0;
        int k = 0;
        if (hx > 0x3fd62e42) { // |x| > 0.5 ln2
            if (hx < 0x3FF0A2B2) { // and |x| < 1.5 ln2
                hi = negative == 0 ? x - LN2_HI : x + LN2_HI;
                lo = negative == 0 ? LN2_LO : -LN2_LO;
                k = 1 - negative - negative;
            } else {
                k = (int) (INV_LN2 * x + (negative == 0 ? 0.5 : -0.5));
                double t = k;
                hi = x - t * LN2_HI; // t * LN2_HI is exact here
                lo = t * LN2_LO;
            }
            x = hi - lo;
        } else if (hx < 0x3e300000) { // |x| < 2^-28
            if (HUGE + x > 1.0) {
                return 1.0 + x; // 1 with inexact
            }
        } else {
            k = 0;
        }

        // x is now in the primary range
        double t = x * x;
        double c = x - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
        if (k == 0) {
            return 1.0 - ((x * c) / (c - 2.0) - x);
        }
        double y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi);
        if (k >= -1021) {
            return Double.longBitsToDouble(Double.doubleToRawLongBits(y) + ((long) k << 52)); // y · 2^k
        }
        return Double.longBitsToDouble(Double.doubleToRawLongBits(y) + ((long) (k + 1000) << 52)) * TWOM1000;
    }
}
