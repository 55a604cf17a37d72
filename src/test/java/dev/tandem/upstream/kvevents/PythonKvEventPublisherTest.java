package dev.tandem.upstream.kvevents;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.KvEventsSettings;
import dev.tandem.protocol.BlockHashes;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Tandem's subscriber (JeroMQ, msgpack-java) against a publisher written with pyzmq (libzmq) and
 * Python's msgpack on vLLM's documented wire (src/test/python/kv_event_publisher.py, Debian's
 * python3-zmq and python3-msgpack): both encodings, integer hashes past a signed long and SHA-256 bytes,
 * engine blocks of another size than Tandem's, removal, and a gap filled by replay.
 */
class PythonKvEventPublisherTest {
    private static final long FINGERPRINT = 77;
    private static final int TANDEM = 16;

    /** The Python publisher, driven over stdin. */
    private static final class Publisher implements AutoCloseable {
        final Process process;
        final BufferedReader out;
        final Writer in;
        final String endpoint;
        final String replay;

        Publisher(String encoding, int blockSize) throws IOException {
            String python = Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";
            process = new ProcessBuilder(
                            python, "src/test/python/kv_event_publisher.py", encoding, String.valueOf(blockSize))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            in = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            String first = out.readLine();
            assertTrue(
                    first != null && first.startsWith("ENDPOINTS "),
                    "the publisher needs python3 with zmq and msgpack (apt-get install python3-zmq python3-msgpack): "
                            + first);
            String[] parts = first.split(" ");
            endpoint = parts[1];
            replay = parts[2];
        }

        void command(String line) throws IOException {
            in.write(line + "\n");
            in.flush();
            assertEquals("OK", out.readLine(), line);
        }

        @Override
        public void close() throws Exception {
            try {
                command("quit");
            } catch (IOException | AssertionError ignored) {
                // already gone
            }
            process.destroy();
            process.waitFor();
        }
    }

    /** What the subscriber's batches amount to, in Tandem blocks. */
    private static final class Followed implements ZmqKvEventSubscriber.Listener, EngineBlockMap.Sink {
        final EngineBlockMap map = new EngineBlockMap(FINGERPRINT, TANDEM, 100_000);
        final Set<Long> held = java.util.Collections.synchronizedSet(new LinkedHashSet<>());
        final AtomicInteger batches = new AtomicInteger();
        final AtomicInteger resets = new AtomicInteger();
        volatile String lastReset;

        @Override
        public synchronized void onBatch(EngineKvBatch batch) {
            batch.events().forEach(e -> map.apply(e, this));
            batches.incrementAndGet();
        }

        @Override
        public synchronized void onReset(String why) {
            lastReset = why;
            map.clear(this);
            resets.incrementAndGet();
        }

        @Override
        public void store(long[] hashes, boolean lowerTier) {
            Arrays.stream(hashes).forEach(held::add);
        }

        @Override
        public void remove(long[] hashes, boolean lowerTier) {
            Arrays.stream(hashes).forEach(held::remove);
        }

        @Override
        public void clear() {
            held.clear();
        }

        boolean holdsAll(long[] hashes) {
            return Arrays.stream(hashes).allMatch(held::contains);
        }
    }

    private static int[] prompt(int seed, int length) {
        return IntStream.range(0, length).map(i -> (i * 31 + seed * 7) % 997).toArray();
    }

    private static String csv(int[] tokens) {
        return Arrays.stream(tokens).mapToObj(String::valueOf).collect(Collectors.joining(","));
    }

    @ParameterizedTest(name = "{0}, engine blocks of {1}")
    @CsvSource({"array, 32", "map, 8"})
    void batchesFromLibzmqAndPythonMsgpackAreFollowedRemovedAndReplayed(String encoding, int blockSize)
            throws Exception {
        try (Publisher publisher = new Publisher(encoding, blockSize)) {
            Followed followed = new Followed();
            try (ZmqKvEventSubscriber subscriber = new ZmqKvEventSubscriber(
                            new KvEventsSettings(publisher.endpoint, publisher.replay, ""), "py-" + encoding, followed)
                    .start()) {
                int[] a = prompt(1, 256);
                long[] hashesA = BlockHashes.of(FINGERPRINT, TANDEM, a);
                TestNodes.awaitTrue(subscriber::connected, "the subscriber to connect");
                publisher.command("prefill " + csv(a));
                TestNodes.awaitTrue(() -> followed.holdsAll(hashesA), "the first prompt's blocks");

                publisher.command("evict");
                TestNodes.awaitTrue(followed.held::isEmpty, "the removal");

                int[] b = prompt(2, 128);
                int[] c = prompt(3, 128);
                publisher.command("withhold 1");
                publisher.command("prefill " + csv(b));
                publisher.command("prefill " + csv(c));
                long[] hashesB = BlockHashes.of(FINGERPRINT, TANDEM, b);
                long[] hashesC = BlockHashes.of(FINGERPRINT, TANDEM, c);
                TestNodes.awaitTrue(
                        () -> followed.holdsAll(hashesB) && followed.holdsAll(hashesC),
                        "the withheld batch, replayed, and the one after it");
                assertTrue(subscriber.gaps() >= 1, "a gap was seen");
                assertEquals(0, followed.resets.get(), () -> "and filled, not reset: " + followed.lastReset);
                assertArrayEquals(
                        java.util.stream.LongStream.concat(Arrays.stream(hashesB), Arrays.stream(hashesC))
                                .sorted()
                                .toArray(),
                        followed.held.stream()
                                .mapToLong(Long::longValue)
                                .sorted()
                                .toArray());
                subscriber.close();
                assertTrue(subscriber.awaitStopped(5_000), "closing ends the subscriber's thread");
            }
        }
    }
}
