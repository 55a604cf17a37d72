package dev.tandem.engine.gguf;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Writes a GGUF version 3 file (little-endian): metadata in the order given, tensor entries, then each
 * tensor's bytes at an offset aligned to {@code general.alignment} (32 unless set). Tests and
 * {@code bench engine} make models of real shapes with it; the bytes of a tensor are written as given,
 * already in the tensor's type.
 */
public final class GgufWriter {
    /** A tensor whose bytes are made when the file is written (one tensor on the heap at a time). */
    private record Tensor(String name, long[] dims, GgmlType type, long size, Supplier<byte[]> data) {}

    private final Map<String, GgufValue> metadata = new LinkedHashMap<>();
    private final List<Tensor> tensors = new ArrayList<>();

    public GgufWriter put(String key, GgufValue value) {
        metadata.put(key, value);
        return this;
    }

    /** A tensor of {@code dims} (ggml order, row length first) whose bytes are {@code data}, in {@code type}. */
    public GgufWriter tensor(String name, long[] dims, GgmlType type, byte[] data) {
        return tensor(name, dims, type, () -> data);
    }

    /** A tensor whose bytes {@code data} supplies when the file is written (it must give them all). */
    public GgufWriter tensor(String name, long[] dims, GgmlType type, Supplier<byte[]> data) {
        long elements = 1;
        for (long d : dims) {
            elements *= d;
        }
        tensors.add(new Tensor(name, dims.clone(), type, type.bytes(elements), data));
        return this;
    }

    public void write(Path file) throws IOException {
        long alignment = metadata.containsKey(GgufFile.ALIGNMENT_KEY)
                ? (Long) metadata.get(GgufFile.ALIGNMENT_KEY).value()
                : GgufFile.DEFAULT_ALIGNMENT;
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            Sink sink = new Sink(out);
            sink.int32(GgufFile.MAGIC);
            sink.int32(3);
            sink.int64(tensors.size());
            sink.int64(metadata.size());
            for (Map.Entry<String, GgufValue> e : metadata.entrySet()) {
                sink.string(e.getKey());
                sink.int32(e.getValue().type().id());
                sink.value(e.getValue());
            }
            long offset = 0;
            for (Tensor t : tensors) {
                sink.string(t.name());
                sink.int32(t.dims().length);
                for (long d : t.dims()) {
                    sink.int64(d);
                }
                sink.int32(t.type().id());
                sink.int64(offset);
                offset = GgufFile.align(offset + t.size(), alignment);
            }
            sink.pad(alignment);
            for (Tensor t : tensors) {
                byte[] data = t.data().get();
                if (data.length != t.size()) {
                    throw new IllegalArgumentException(
                            t.name() + ": " + t.type() + " " + java.util.Arrays.toString(t.dims()) + " takes "
                                    + t.size() + " bytes, not " + data.length);
                }
                sink.bytes(data);
                sink.pad(alignment);
            }
        }
    }

    /** Little-endian output that counts its position, for the padding. */
    private static final class Sink {
        private final OutputStream out;
        private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        private long position;

        Sink(OutputStream out) {
            this.out = out;
        }

        void bytes(byte[] b) throws IOException {
            out.write(b);
            position += b.length;
        }

        void int8(int v) throws IOException {
            out.write(v);
            position++;
        }

        private void scratch(int n) throws IOException {
            out.write(scratch.array(), 0, n);
            position += n;
            scratch.clear();
        }

        void int16(int v) throws IOException {
            scratch.putShort((short) v);
            scratch(2);
        }

        void int32(int v) throws IOException {
            scratch.putInt(v);
            scratch(4);
        }

        void int64(long v) throws IOException {
            scratch.putLong(v);
            scratch(8);
        }

        void string(String s) throws IOException {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            int64(b.length);
            bytes(b);
        }

        void pad(long alignment) throws IOException {
            while (position % alignment != 0) {
                int8(0);
            }
        }

        void value(GgufValue v) throws IOException {
            if (v.type() == GgufValueType.ARRAY) {
                array(v);
            } else {
                scalar(v.type(), v.value());
            }
        }

        private void array(GgufValue v) throws IOException {
            int32(v.elementType().id());
            int n = v.length();
            int64(n);
            for (int i = 0; i < n; i++) {
                Object e = java.lang.reflect.Array.get(v.value(), i);
                if (v.elementType() == GgufValueType.ARRAY) {
                    array((GgufValue) e);
                } else {
                    scalar(v.elementType(), e);
                }
            }
        }

        private void scalar(GgufValueType type, Object v) throws IOException {
            switch (type) {
                case UINT8, INT8 -> int8(((Number) v).intValue());
                case UINT16, INT16 -> int16(((Number) v).intValue());
                case UINT32, INT32 -> int32(((Number) v).intValue());
                case UINT64, INT64 -> int64(((Number) v).longValue());
                case FLOAT32 -> int32(Float.floatToRawIntBits(((Number) v).floatValue()));
                case FLOAT64 -> int64(Double.doubleToRawLongBits(((Number) v).doubleValue()));
                case BOOL -> int8((Boolean) v ? 1 : 0);
                case STRING -> string((String) v);
                case ARRAY -> throw new IllegalArgumentException("an array is not a scalar");
            }
        }
    }
}
