package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.RouterSettings;
import dev.tandem.config.TandemConfig;
import java.util.Arrays;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;

/**
 * One row of the request core's tables: workers p1.. and d1.., router settings, and a script that
 * plays events against a {@link CoreHarness} and checks what the client and the workers saw. Every
 * row then ends with nothing held and exactly one ending per client.
 */
record EventSequence(
        String name, int prefill, int decode, UnaryOperator<RouterSettings> settings, Consumer<CoreHarness> script) {

    static EventSequence of(String name, int prefill, int decode, Consumer<CoreHarness> script) {
        return new EventSequence(name, prefill, decode, s -> s, script);
    }

    static EventSequence of(
            String name,
            int prefill,
            int decode,
            UnaryOperator<RouterSettings> settings,
            Consumer<CoreHarness> script) {
        return new EventSequence(name, prefill, decode, settings, script);
    }

    void play() {
        CoreHarness h = new CoreHarness(
                prefill, decode, settings.apply(TandemConfig.defaults().router()));
        script.accept(h);
        h.loop.runPending();
        assertEquals("", h.leftovers(), "everything released, one ending per client");
    }

    @Override
    public String toString() {
        return name;
    }

    static int[] range(int from, int to) {
        return IntStream.rangeClosed(from, to).toArray();
    }

    static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
