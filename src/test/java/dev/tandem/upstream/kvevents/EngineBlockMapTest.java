package dev.tandem.upstream.kvevents;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.BlockHashes;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Engine blocks of any size, mapped to Tandem's 16-token chained blocks as routers hash prompts. */
class EngineBlockMapTest {
    private static final long FINGERPRINT = 0x5eed;
    private static final int TANDEM = 16;

    /** The Tandem blocks a sink was told of, per tier. */
    static final class Held implements EngineBlockMap.Sink {
        final Set<Long> first = new LinkedHashSet<>();
        final Set<Long> lower = new LinkedHashSet<>();

        @Override
        public void store(long[] hashes, boolean lowerTier) {
            Arrays.stream(hashes).forEach((lowerTier ? lower : first)::add);
        }

        @Override
        public void remove(long[] hashes, boolean lowerTier) {
            Arrays.stream(hashes).forEach((lowerTier ? lower : first)::remove);
        }

        @Override
        public void clear() {
            first.clear();
            lower.clear();
        }

        long[] first() {
            return first.stream().mapToLong(Long::longValue).toArray();
        }
    }

    private static int[] prompt(int length) {
        int[] p = new int[length];
        for (int i = 0; i < length; i++) {
            p[i] = (i * 7919) % 1000;
        }
        return p;
    }

    /** The engine storing {@code prompt}'s full blocks of {@code size}, {@code perEvent} blocks an event. */
    private static void storeAll(EngineBlockMap map, Held held, int[] prompt, int size, int perEvent, long salt) {
        int blocks = prompt.length / size;
        for (int from = 0; from < blocks; from += perEvent) {
            int n = Math.min(perEvent, blocks - from);
            long[] hashes = new long[n];
            for (int i = 0; i < n; i++) {
                hashes[i] = salt + from + i;
            }
            map.apply(
                    new EngineKvEvent.Stored(
                            hashes,
                            from > 0,
                            salt + from - 1,
                            Arrays.copyOfRange(prompt, from * size, (from + n) * size),
                            size,
                            new boolean[n],
                            false),
                    held);
        }
    }

    @ParameterizedTest(name = "engine blocks of {0}")
    @ValueSource(ints = {1, 8, 16, 24, 32, 64})
    void storedBlocksAreTheRoutersHashesOfThePrompt(int size) {
        int[] prompt = prompt(1_000);
        EngineBlockMap map = new EngineBlockMap(FINGERPRINT, TANDEM, 100_000);
        Held held = new Held();
        storeAll(map, held, prompt, size, 3, 1_000);
        int covered = prompt.length / size * size;
        long[] expected = BlockHashes.of(FINGERPRINT, TANDEM, Arrays.copyOf(prompt, covered));
        assertArrayEquals(expected, held.first());
    }

    @ParameterizedTest(name = "engine blocks of {0}")
    @ValueSource(ints = {1, 8, 16, 24, 32, 64})
    void removingAnEngineBlockTakesBackEveryTandemBlockWithItsTokens(int size) {
        int[] prompt = prompt(512);
        EngineBlockMap map = new EngineBlockMap(FINGERPRINT, TANDEM, 100_000);
        Held held = new Held();
        storeAll(map, held, prompt, size, 4, 0);
        long[] all = BlockHashes.of(FINGERPRINT, TANDEM, Arrays.copyOf(prompt, prompt.length / size * size));
        // The engine evicts its block holding token 100.
        int evicted = 100 / size;
        map.apply(new EngineKvEvent.Removed(new long[] {evicted}, false), held);
        int firstToken = evicted * size;
        int lastToken = firstToken + size - 1;
        for (int t = 0; t < all.length; t++) {
            boolean overlaps = t * TANDEM <= lastToken && (t + 1) * TANDEM - 1 >= firstToken;
            assertEquals(!overlaps, held.first.contains(all[t]), "Tandem block " + t + " of engine block " + evicted);
        }
    }

    @Test
    void keyedBlocksAndTheirDescendantsMatchNoPlainPrompt() {
        int[] prompt = prompt(64);
        EngineBlockMap map = new EngineBlockMap(FINGERPRINT, TANDEM, 100);
        Held held = new Held();
        map.apply(
                new EngineKvEvent.Stored(
                        new long[] {1, 2, 3, 4},
                        false,
                        0,
                        prompt,
                        TANDEM,
                        new boolean[] {false, true, false, false},
                        false),
                held);
        assertArrayEquals(Arrays.copyOf(BlockHashes.of(FINGERPRINT, TANDEM, prompt), 1), held.first());
    }

    @Test
    void blocksAfterAnUnknownParentAreNotGuessed() {
        EngineBlockMap map = new EngineBlockMap(FINGERPRINT, TANDEM, 100);
        Held held = new Held();
        map.apply(new EngineKvEvent.Stored(new long[] {5}, true, 99, prompt(16), TANDEM, new boolean[1], false), held);
        assertEquals(0, held.first.size());
        assertEquals(1, map.unmapped());
    }

    @Test
    void tiersAreKeptApartAndAClearEmptiesBoth() {
        int[] prompt = prompt(32);
        long[] hashes = BlockHashes.of(FINGERPRINT, TANDEM, prompt);
        EngineBlockMap map = new EngineBlockMap(FINGERPRINT, TANDEM, 100);
        Held held = new Held();
        map.apply(new EngineKvEvent.Stored(new long[] {1, 2}, false, 0, prompt, TANDEM, new boolean[2], false), held);
        // Offloaded to CPU, then evicted from the GPU: the lower tier keeps it.
        map.apply(new EngineKvEvent.Stored(new long[] {1, 2}, false, 0, prompt, TANDEM, new boolean[2], true), held);
        map.apply(new EngineKvEvent.Removed(new long[] {1, 2}, false), held);
        assertEquals(Set.of(), held.first);
        assertEquals(Set.of(hashes[0], hashes[1]), held.lower);
        map.apply(new EngineKvEvent.Cleared(), held);
        assertEquals(Set.of(), held.lower);
        assertEquals(0, map.size());
    }

    @Test
    void pastItsBoundTheMapStartsOver() {
        EngineBlockMap map = new EngineBlockMap(FINGERPRINT, TANDEM, 2);
        Held held = new Held();
        map.apply(
                new EngineKvEvent.Stored(new long[] {1, 2, 3}, false, 0, prompt(48), TANDEM, new boolean[3], false),
                held);
        assertEquals(0, held.first.size(), "forgotten rather than half known");
        assertEquals(0, map.size());
    }
}
