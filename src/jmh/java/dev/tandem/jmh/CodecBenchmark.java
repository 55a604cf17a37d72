package dev.tandem.jmh;

import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.Sampling;
import dev.tandem.protocol.TokenBatch;
import dev.tandem.protocol.TokenEvent;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The wire codecs on the hot path, each a round trip as a message makes it (record → JSON text → record):
 * a 1,024-token PREFILL_REQUEST, a token batch of 64 streams' steps, a registry entry (every heartbeat).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class CodecBenchmark {
    private final PrefillRequest prefill;
    private final TokenBatch batch;
    private final WorkerDescriptor worker;

    public CodecBenchmark() {
        int[] prompt = new int[1024];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = (i * 7919) % 32000;
        }
        prefill = new PrefillRequest(42L, prompt, "decode-1", new Sampling(0.7, 0.9, 40, 7), "node-1", 1, 3, null);
        List<TokenEvent> events = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            events.add(new TokenEvent(1000L + i, 17, new int[] {i * 13}, null, null));
        }
        batch = new TokenBatch("decode-1", events);
        worker = new WorkerDescriptor(
                "decode-1", WorkerRole.DECODE, "stories15M", 1234567L, "node-1", 64, false, new WorkerLoad(300, 12, 1L << 20, 1L << 30));
    }

    private static <T> T roundTrip(JsonCodec<T> codec, T value) {
        String text = codec.encode(value).encode();
        return codec.decode(new JsonObject(text));
    }

    @Benchmark
    public PrefillRequest prefillRequest() {
        return roundTrip(PrefillRequest.CODEC, prefill);
    }

    @Benchmark
    public TokenBatch tokenBatch() {
        return roundTrip(TokenBatch.CODEC, batch);
    }

    @Benchmark
    public WorkerDescriptor workerDescriptor() {
        return roundTrip(WorkerDescriptor.CODEC, worker);
    }
}
