package dev.tandem.engine.tokenizer;

import java.util.Arrays;

/** llama.cpp's per-offset state: the piece [ini, end) of the text and its _add_token. */
final class BpePiece {
    static final int OUT_OF_RANGE = -1;

    final int[] cpts;
    final int[] cptFlags;
    final Offsets out;
    int ini;
    int end;
    int prevEnd;

    BpePiece(int[] cpts, int[] cptFlags, Offsets out) {
        this.cpts = cpts;
        this.cptFlags = cptFlags;
        this.out = out;
    }

    void reset(int ini, int end) {
        this.ini = ini;
        this.end = end;
        this.prevEnd = ini;
    }

    int cpt(int pos) {
        return ini <= pos && pos < end ? cpts[pos] : OUT_OF_RANGE;
    }

    /** Outside the piece: no flags at all (llama.cpp's {@code unicode_cpt_flags{}}). */
    int flags(int pos) {
        return ini <= pos && pos < end ? cptFlags[pos] : 0;
    }

    int addToken(int tokenEnd) {
        int len = tokenEnd - prevEnd;
        if (len > 0) {
            out.add(len);
        }
        prevEnd = tokenEnd;
        return len;
    }

    /** Word lengths in code points, as llama.cpp's {@code bpe_offsets}. */
    static final class Offsets {
        int[] lengths = new int[16];
        int size;

        void add(int length) {
            if (size == lengths.length) {
                lengths = Arrays.copyOf(lengths, size * 2);
            }
            lengths[size++] = length;
        }
    }
}
