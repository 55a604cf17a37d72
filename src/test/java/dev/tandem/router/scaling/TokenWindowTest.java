package dev.tandem.router.scaling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The sliding window of admitted prompt tokens and delivered output tokens, on a clock the test moves. */
class TokenWindowTest {
    private static final long S = 1_000_000_000L;

    @Test
    void ratesOverAFullWindow() {
        TokenWindow w = new TokenWindow(30 * S);
        for (int sec = 0; sec < 60; sec++) {
            w.arrived("m", 1000, sec * S);
            w.served("m", 200, sec * S);
        }
        TokenWindow.Rates r = w.rates(60 * S).get("m");
        assertEquals(1000, r.uncachedPromptTokensPerSec(), 50);
        assertEquals(200, r.outputTokensPerSec(), 10);
    }

    @Test
    void aWindowNotYetFullIsAsLongAsItCounted() {
        TokenWindow w = new TokenWindow(30 * S);
        for (int sec = 0; sec < 5; sec++) {
            w.arrived("m", 1000, sec * S);
        }
        assertEquals(1000, w.rates(5 * S).get("m").uncachedPromptTokensPerSec(), 1);
    }

    @Test
    void cachedAndLocallyPrefilledTokensDoNotCount() {
        TokenWindow w = new TokenWindow(30 * S);
        for (int sec = 0; sec < 30; sec++) {
            w.arrived("m", 1000, sec * S);
            // A quarter of each prompt a prefill worker computes; the rest was cached or prefilled locally.
            w.prefilled("m", 1000, 250, sec * S);
        }
        assertEquals(250, w.rates(30 * S).get("m").uncachedPromptTokensPerSec(), 15);
    }

    @Test
    void oldTokensAgeOutAndSilentModelsAreForgotten() {
        TokenWindow w = new TokenWindow(30 * S);
        w.arrived("m", 30_000, 0);
        w.arrived("n", 30_000, 0);
        w.arrived("n", 3_000, 40 * S);
        Map<String, TokenWindow.Rates> r = w.rates(45 * S);
        assertEquals(100, r.get("n").uncachedPromptTokensPerSec(), 1e-9);
        assertTrue(!r.containsKey("m"), "m was silent for a whole window: " + r);
    }

    @Test
    void doublingArrivalsDoublesTheRate() {
        TokenWindow one = new TokenWindow(10 * S);
        TokenWindow two = new TokenWindow(10 * S);
        for (long t = 0; t < 20 * S; t += S / 10) {
            one.arrived("m", 500, t);
            two.arrived("m", 500, t);
            two.arrived("m", 500, t + S / 20);
        }
        double a = one.rates(20 * S).get("m").uncachedPromptTokensPerSec();
        double b = two.rates(20 * S).get("m").uncachedPromptTokensPerSec();
        assertEquals(2, b / a, 0.05);
    }
}
