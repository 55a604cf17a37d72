package dev.tandem.bench.trace;

import static dev.tandem.bench.trace.TraceTokens.TRACE_BLOCK_TOKENS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Prompt tokens share exactly the prefixes the trace's hash ids say they share, and nothing else. */
class TraceTokensTest {
    private final TraceTokens tokens = new TraceTokens(3, 32_000);

    private static TraceRequest mooncake(int input, long... ids) {
        return new TraceRequest(0, input, 1, ids);
    }

    private static int[] block(int[] prompt, int b) {
        return Arrays.copyOfRange(
                prompt, b * TRACE_BLOCK_TOKENS, Math.min((b + 1) * TRACE_BLOCK_TOKENS, prompt.length));
    }

    @Test
    void equalIdsGiveEqualBlocksAndDifferentIdsDifferentOnes() {
        int[] a = tokens.prompt(mooncake(1536, 1, 2, 3), 0);
        int[] b = tokens.prompt(mooncake(1536, 1, 2, 9), 1);

        assertArrayEquals(block(a, 0), block(b, 0));
        assertArrayEquals(block(a, 1), block(b, 1));
        assertFalse(Arrays.equals(block(a, 2), block(b, 2)));
        // Different, not merely unequal somewhere: a chance match at one offset is 1 in 32k.
        int same = 0;
        for (int i = 0; i < TRACE_BLOCK_TOKENS; i++) {
            same += block(a, 2)[i] == block(b, 2)[i] ? 1 : 0;
        }
        assertTrue(same < 5, same + " equal offsets");
    }

    @Test
    void aBlockDependsOnItsIdAloneAndTheRequestIndexIsIgnored() {
        int[] alone = tokens.prompt(mooncake(512, 5), 0);
        int[] second = tokens.prompt(mooncake(1024, 7, 5), 42);

        assertArrayEquals(alone, block(second, 1));
        for (int j = 0; j < TRACE_BLOCK_TOKENS; j += 97) {
            assertEquals(tokens.blockToken(5, j), alone[j]);
        }
    }

    @ParameterizedTest(name = "{0} tokens")
    @CsvSource({"1", "100", "511", "512", "513", "1000", "1024"})
    void truncatesToInputLengthAndAPartialBlockIsAPrefixOfTheFullOne(int input) {
        long[] ids = Arrays.copyOf(new long[] {11, 12}, TraceRequest.blocksFor(input));
        int[] full = tokens.prompt(mooncake(1024, 11, 12), 0);

        int[] prompt = tokens.prompt(mooncake(input, ids), 3);

        assertEquals(input, prompt.length);
        assertArrayEquals(Arrays.copyOf(full, input), prompt);
    }

    @ParameterizedTest(name = "[{0}, {1})")
    @CsvSource({"0, 1", "3, 32000", "100, 110", "0, 2147483647", "2147483646, 2147483647"})
    void everyTokenIsInTheRange(int low, int high) {
        TraceTokens t = new TraceTokens(low, high);
        Set<Integer> seen = new HashSet<>();

        for (int[] prompt : List.of(
                t.prompt(mooncake(5000, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), 0), t.prompt(new TraceRequest(0, 5000, 1), 0))) {
            for (int token : prompt) {
                assertTrue(token >= low && token < high, token + " outside [" + low + ", " + high + ")");
                seen.add(token);
            }
        }
        if (high - low <= 10) {
            assertEquals(high - low, seen.size(), "a small range is covered, not just respected");
        }
    }

    @Test
    void requestsWithoutIdsShareNoFirstBlock() {
        TraceRequest azure = new TraceRequest(0, 600, 1);
        Set<List<Integer>> firstTokens = new HashSet<>();
        int requests = 1000;

        for (int i = 0; i < requests; i++) {
            int[] prompt = tokens.prompt(azure, i);
            // 4 tokens already tell them apart; every longer first block then differs too.
            firstTokens.add(List.of(prompt[0], prompt[1], prompt[2], prompt[3]));
        }

        assertEquals(requests, firstTokens.size());
        assertArrayEquals(tokens.prompt(azure, 7), tokens.prompt(new TraceRequest(99, 600, 5), 7));
        assertFalse(Arrays.equals(tokens.prompt(azure, 7), tokens.prompt(azure, 8)));
    }

    @Test
    void theSameInEveryInstance() {
        TraceRequest r = mooncake(700, 1234567, 89);

        assertArrayEquals(tokens.prompt(r, 0), new TraceTokens(3, 32_000).prompt(r, 0));
        assertFalse(Arrays.equals(tokens.prompt(r, 0), new TraceTokens(4, 32_000).prompt(r, 0)));
    }

    @ParameterizedTest(name = "[{0}, {1})")
    @CsvSource({"5, 5", "6, 5", "-1, 10"})
    void refusesAnEmptyOrNegativeRange(int low, int high) {
        assertThrows(IllegalArgumentException.class, () -> new TraceTokens(low, high));
    }
}
