package dev.tandem.engine.reference;

import dev.tandem.engine.ModelConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes weights as a llama2.c legacy (version 0) checkpoint that run.c and {@link Llama2cCheckpoint}
 * read. The RoPE tables run.c no longer reads are filled with the real cos/sin values, as llama2.c's
 * export does, so older readers work too.
 */
public final class Llama2cCheckpointWriter {

    private Llama2cCheckpointWriter() {}

    public static void write(Path file, ModelWeights weights) throws IOException {
        ModelConfig c = weights.config();
        try (FileChannel ch = FileChannel.open(
                file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
            for (int v : new int[] {
                c.dim(),
                c.hiddenDim(),
                c.layers(),
                c.heads(),
                c.kvHeads(),
                c.sharedClassifier() ? c.vocabSize() : -c.vocabSize(),
                c.seqLen()
            }) {
                buf.putInt(v);
            }
            for (ModelWeights.Tensor t : weights.tensors()) {
                if (t.name().equals("classifier")) {
                    writeRopeTables(ch, buf, c);
                }
                for (float f : t.data()) {
                    put(ch, buf, f);
                }
            }
            if (c.sharedClassifier()) {
                writeRopeTables(ch, buf, c);
            }
            drain(ch, buf);
        }
    }

    private static void writeRopeTables(FileChannel ch, ByteBuffer buf, ModelConfig c) throws IOException {
        int half = c.headSize() / 2;
        float[] cos = new float[half];
        float[] sin = new float[half];
        for (int table = 0; table < 2; table++) {
            for (int pos = 0; pos < c.seqLen(); pos++) {
                TransformerMath.ropeAngles(pos, c.headSize(), cos, sin, 0);
                for (float f : table == 0 ? cos : sin) {
                    put(ch, buf, f);
                }
            }
        }
    }

    private static void put(FileChannel ch, ByteBuffer buf, float f) throws IOException {
        if (buf.remaining() < Float.BYTES) {
            drain(ch, buf);
        }
        buf.putFloat(f);
    }

    private static void drain(FileChannel ch, ByteBuffer buf) throws IOException {
        buf.flip();
        while (buf.hasRemaining()) {
            ch.write(buf);
        }
        buf.clear();
    }
}
