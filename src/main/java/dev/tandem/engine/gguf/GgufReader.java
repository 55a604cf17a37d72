package dev.tandem.engine.gguf;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** Reads a GGUF header's primitives, checking every length and count against what is left of the file. */
final class GgufReader {
    /** Arrays of arrays deeper than this are refused (no model writes more than one level). */
    private static final int MAX_DEPTH = 4;

    private static final int MAX_DIMS = 4;

    private final ByteBuffer in;
    private final String file;

    GgufReader(ByteBuffer in, String file) {
        this.in = in;
        this.file = file;
    }

    int int32() {
        return in.getInt();
    }

    /** A 64-bit count, refused when even one byte per item would not fit in what is left. */
    long count(String what) {
        long n = in.getLong();
        if (n < 0 || n > in.remaining()) {
            throw new GgufFormatException(
                    file + ": " + what + " " + Long.toUnsignedString(n) + " does not fit in the file");
        }
        return n;
    }

    String string() {
        long length = in.getLong();
        if (length < 0 || length > in.remaining()) {
            throw new GgufFormatException(file + ": a string of " + Long.toUnsignedString(length)
                    + " bytes does not fit in the file at " + (in.position() - 8));
        }
        byte[] bytes = new byte[(int) length];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    GgufValue value(int depth) {
        GgufValueType type = type(in.getInt());
        return type == GgufValueType.ARRAY ? array(depth) : GgufValue.of(type, scalar(type));
    }

    /** An array's element type, length and elements (an element that is an array is read the same way). */
    private GgufValue array(int depth) {
        if (depth >= MAX_DEPTH) {
            throw new GgufFormatException(file + ": arrays nested deeper than " + MAX_DEPTH);
        }
        GgufValueType element = type(in.getInt());
        long n = in.getLong();
        long least = element.size > 0 ? element.size : 8;
        if (n < 0 || n > in.remaining() / least) {
            throw new GgufFormatException(
                    file + ": an array of " + Long.toUnsignedString(n) + " " + element + " does not fit in the file");
        }
        return GgufValue.array(element, elements(element, (int) n, depth));
    }

    private GgufValueType type(int id) {
        GgufValueType t = GgufValueType.byId(id);
        if (t == null) {
            throw new GgufFormatException(file + ": unknown metadata value type " + id + " at " + (in.position() - 4));
        }
        return t;
    }

    private Object scalar(GgufValueType type) {
        return switch (type) {
            case UINT8 -> (long) Byte.toUnsignedInt(in.get());
            case INT8 -> (long) in.get();
            case UINT16 -> (long) Short.toUnsignedInt(in.getShort());
            case INT16 -> (long) in.getShort();
            case UINT32 -> Integer.toUnsignedLong(in.getInt());
            case INT32 -> (long) in.getInt();
            case UINT64, INT64 -> in.getLong();
            case FLOAT32 -> in.getFloat();
            case FLOAT64 -> in.getDouble();
            case BOOL -> bool();
            case STRING -> string();
            case ARRAY -> throw new IllegalStateException("arrays are read by value()");
        };
    }

    private boolean bool() {
        byte b = in.get();
        if (b != 0 && b != 1) {
            throw new GgufFormatException(file + ": a bool of " + b + " at " + (in.position() - 1));
        }
        return b == 1;
    }

    private Object elements(GgufValueType element, int n, int depth) {
        switch (element) {
            case FLOAT32 -> {
                float[] a = new float[n];
                in.asFloatBuffer().get(a);
                in.position(in.position() + 4 * n);
                return a;
            }
            case FLOAT64 -> {
                double[] a = new double[n];
                for (int i = 0; i < n; i++) {
                    a[i] = in.getDouble();
                }
                return a;
            }
            case BOOL -> {
                boolean[] a = new boolean[n];
                for (int i = 0; i < n; i++) {
                    a[i] = bool();
                }
                return a;
            }
            case STRING -> {
                String[] a = new String[n];
                for (int i = 0; i < n; i++) {
                    a[i] = string();
                }
                return a;
            }
            case ARRAY -> {
                GgufValue[] a = new GgufValue[n];
                for (int i = 0; i < n; i++) {
                    a[i] = array(depth + 1);
                }
                return a;
            }
            default -> {
                long[] a = new long[n];
                for (int i = 0; i < n; i++) {
                    a[i] = (Long) scalar(element);
                }
                return a;
            }
        }
    }

    GgufTensorInfo tensorInfo() {
        String name = string();
        int nDims = in.getInt();
        if (nDims < 1 || nDims > MAX_DIMS) {
            throw new GgufFormatException(
                    file + ": tensor " + name + " has " + nDims + " dimensions (1 to " + MAX_DIMS + ")");
        }
        long[] dims = new long[nDims];
        for (int i = 0; i < nDims; i++) {
            dims[i] = in.getLong();
            if (dims[i] <= 0 || dims[i] > Integer.MAX_VALUE) {
                throw new GgufFormatException(
                        file + ": tensor " + name + " has dimension " + Long.toUnsignedString(dims[i]));
            }
        }
        int typeId = in.getInt();
        GgmlType type = GgmlType.byId(typeId);
        if (type == null) {
            throw new GgufFormatException(
                    file + ": tensor " + name + " has ggml type " + typeId + ", which this reader does not know");
        }
        long offset = in.getLong();
        GgufTensorInfo info = new GgufTensorInfo(name, dims, type, offset);
        if (dims[0] % type.blockElements() != 0) {
            throw new GgufFormatException(file + ": tensor " + name + "'s rows of " + dims[0] + " do not fill " + type
                    + " blocks of " + type.blockElements());
        }
        try {
            info.byteSize();
        } catch (ArithmeticException e) {
            throw new GgufFormatException(file + ": tensor " + name + " is too large", e);
        }
        return info;
    }
}
