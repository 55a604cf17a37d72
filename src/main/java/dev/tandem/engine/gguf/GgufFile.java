package dev.tandem.engine.gguf;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file (versions 2 and 3, little-endian), opened for reading: its metadata, its tensor
 * entries, and each tensor's bytes as a read-only buffer mapped from the file, so the weights are
 * never copied onto the heap and files over 2 GiB open (each tensor is mapped on its own).
 * Anything malformed — a wrong magic, counts or lengths past the file, unknown types, tensors out of
 * bounds or overlapping the header — is refused with a {@link GgufFormatException} naming it.
 */
public final class GgufFile {
    static final int MAGIC = 0x46554747; // "GGUF", little-endian
    static final int DEFAULT_ALIGNMENT = 32;
    public static final String ALIGNMENT_KEY = "general.alignment";

    private final Path path;
    private final int version;
    private final GgufMetadata metadata;
    private final Map<String, GgufTensorInfo> tensors;
    private final long dataStart;
    private final long fileSize;

    private GgufFile(
            Path path,
            int version,
            GgufMetadata metadata,
            Map<String, GgufTensorInfo> tensors,
            long dataStart,
            long fileSize) {
        this.path = path;
        this.version = version;
        this.metadata = metadata;
        this.tensors = tensors;
        this.dataStart = dataStart;
        this.fileSize = fileSize;
    }

    public static GgufFile open(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = channel.size();
            // The header is read through a mapping too: mapping costs nothing until a page is touched.
            ByteBuffer header = channel.map(FileChannel.MapMode.READ_ONLY, 0, Math.min(size, Integer.MAX_VALUE - 8))
                    .order(ByteOrder.LITTLE_ENDIAN);
            try {
                return read(path, header, size);
            } catch (BufferUnderflowException e) {
                throw new GgufFormatException(path + " ends inside its GGUF header", e);
            }
        }
    }

    private static GgufFile read(Path path, ByteBuffer in, long size) {
        GgufReader r = new GgufReader(in, path.toString());
        int magic = r.int32();
        if (magic != MAGIC) {
            throw new GgufFormatException(path + " is not a GGUF file (magic " + Integer.toHexString(magic) + ")");
        }
        int version = r.int32();
        if (version != 2 && version != 3) {
            throw new GgufFormatException(path + " is GGUF version "
                    + (Integer.reverseBytes(version) == 2 || Integer.reverseBytes(version) == 3
                            ? Integer.reverseBytes(version) + " big-endian"
                            : Integer.toUnsignedString(version))
                    + "; versions 2 and 3 (little-endian) are read");
        }
        long tensorCount = r.count("tensor count");
        long kvCount = r.count("metadata count");
        Map<String, GgufValue> kv = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            String key = r.string();
            if (kv.put(key, r.value(0)) != null) {
                throw new GgufFormatException(path + " has the metadata key '" + key + "' twice");
            }
        }
        GgufMetadata metadata = new GgufMetadata(kv);
        long alignment = metadata.has(ALIGNMENT_KEY) ? metadata.integer(ALIGNMENT_KEY) : DEFAULT_ALIGNMENT;
        if (alignment <= 0 || alignment > 1 << 20 || Long.bitCount(alignment) != 1) {
            throw new GgufFormatException(path + ": general.alignment " + alignment + " is not a power of two");
        }
        List<GgufTensorInfo> infos = new ArrayList<>();
        for (long i = 0; i < tensorCount; i++) {
            infos.add(r.tensorInfo());
        }
        long dataStart = align(in.position(), alignment);
        Map<String, GgufTensorInfo> tensors = new LinkedHashMap<>();
        for (GgufTensorInfo t : infos) {
            if (t.offset() % alignment != 0) {
                throw new GgufFormatException(path + ": tensor " + t.name() + " is not aligned to " + alignment);
            }
            if (t.offset() < 0 || t.offset() > size - dataStart || t.byteSize() > size - dataStart - t.offset()) {
                throw new GgufFormatException(
                        path + ": tensor " + t + " lies past the end of the file (" + size + " bytes)");
            }
            if (tensors.put(t.name(), t) != null) {
                throw new GgufFormatException(path + " has the tensor '" + t.name() + "' twice");
            }
        }
        return new GgufFile(path, version, metadata, Collections.unmodifiableMap(tensors), dataStart, size);
    }

    static long align(long position, long alignment) {
        return (position + alignment - 1) / alignment * alignment;
    }

    public Path path() {
        return path;
    }

    public int version() {
        return version;
    }

    public GgufMetadata metadata() {
        return metadata;
    }

    /** The tensor entries, in file order. */
    public List<GgufTensorInfo> tensors() {
        return List.copyOf(tensors.values());
    }

    public boolean hasTensor(String name) {
        return tensors.containsKey(name);
    }

    public GgufTensorInfo tensor(String name) {
        GgufTensorInfo t = tensors.get(name);
        if (t == null) {
            throw new GgufFormatException(path + " has no tensor '" + name + "'");
        }
        return t;
    }

    /** Where the data section starts, after the header's padding. */
    public long dataStart() {
        return dataStart;
    }

    public long fileSize() {
        return fileSize;
    }

    /** The tensor's bytes, mapped read-only from the file (little-endian); no copy on the heap. */
    public ByteBuffer data(GgufTensorInfo tensor) throws IOException {
        long bytes = tensor.byteSize();
        if (bytes > Integer.MAX_VALUE) {
            throw new GgufFormatException(
                    path + ": tensor " + tensor.name() + " is " + bytes + " bytes, more than one mapping holds");
        }
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            return channel.map(FileChannel.MapMode.READ_ONLY, dataStart + tensor.offset(), bytes)
                    .order(ByteOrder.LITTLE_ENDIAN);
        }
    }
}
