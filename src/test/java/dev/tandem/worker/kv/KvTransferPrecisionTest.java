package dev.tandem.worker.kv;

import static dev.tandem.worker.kv.KvTransferCodecTest.FINGERPRINT;
import static dev.tandem.worker.kv.KvTransferCodecTest.NO_LIMIT;
import static dev.tandem.worker.kv.KvTransferCodecTest.assertSameKv;
import static dev.tandem.worker.kv.KvTransferCodecTest.concat;
import static dev.tandem.worker.kv.KvTransferCodecTest.receive;
import static dev.tandem.worker.kv.KvTransferCodecTest.slice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.tandem.engine.KvCache;
import dev.tandem.engine.KvLayout;
import dev.tandem.engine.KvPrecision;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * KV whose values are exact in f16 or bf16 (a GGUF model's) travels in two bytes a value and arrives
 * bit for bit, however the stream is cut (values straddling chunks included); a receiver of another
 * precision refuses the stream.
 */
class KvTransferPrecisionTest {
    private static KvLayout layout(KvPrecision p) {
        KvLayout f32 = new KvLayout(2, 2, 4, 16);
        return new KvLayout(2, 2, 4, 16, f32.blockBytes(), p);
    }

    /** Random values rounded to the precision, as the engine's cache holds them. */
    private static KvCache cache(KvLayout layout, int tokens, long seed) {
        KvCache cache = new KvCache(layout);
        cache.ensureCapacity(tokens);
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int b = 0; b < cache.blockCount(); b++) {
            float[] block = cache.block(b);
            for (int i = 0; i < block.length; i++) {
                KvPrecision p = layout.precision();
                block[i] = p.decode(p.encode((float) (rnd.nextGaussian() * 10)));
            }
        }
        cache.setLength(tokens);
        return cache;
    }

    @ParameterizedTest
    @CsvSource({"F16, 1, 64", "F16, 17, 65", "F16, 100, 101", "BF16, 33, 67", "BF16, 100, 4097", "F32, 17, 101"})
    void roundTripsInTwoBytesAValue(KvPrecision precision, int tokens, int chunk) throws KvTransferException {
        KvLayout layout = layout(precision);
        KvCache sent = cache(layout, tokens, tokens);
        List<Buffer> chunks = KvTransferCodec.encode(sent, FINGERPRINT, chunk);
        long size = KvTransferCodec.encodedSize(layout, tokens);
        assertEquals(
                KvTransferCodec.HEADER_BYTES
                        + KvTransferCodec.TRAILER_BYTES
                        + (long) layout.blocksFor(tokens) * layout.blockFloats() * precision.bytes(),
                size);
        assertEquals(size, concat(chunks).length);
        assertSameKv(sent, receive(new KvTransferAssembler(layout, FINGERPRINT, NO_LIMIT), chunks));
        // cut again into odd slices: a value's two bytes land in different chunks
        assertSameKv(sent, receive(new KvTransferAssembler(layout, FINGERPRINT, NO_LIMIT), slice(concat(chunks), 7)));
    }

    @ParameterizedTest
    @EnumSource(names = {"F16", "BF16"})
    void aReceiverOfAnotherPrecisionRefusesTheStream(KvPrecision precision) {
        KvCache sent = cache(layout(precision), 20, 3);
        List<Buffer> chunks = KvTransferCodec.encode(sent, FINGERPRINT, 1 << 16);
        KvTransferAssembler f32 = new KvTransferAssembler(layout(KvPrecision.F32), FINGERPRINT, NO_LIMIT);
        KvTransferException e = assertThrows(KvTransferException.class, () -> f32.accept(chunks.get(0)));
        assertEquals(KvTransferException.Reason.BAD_DTYPE, e.reason());
    }
}
