package dev.tandem.router.scheduling;

import static dev.tandem.router.scheduling.Workers.w;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.config.PickerSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code softmax}: Dynamo's selection over the weighted scores. Each row: scores, temperature, and the
 * share of 20,000 decisions (ticks 0 to 19,999, seed 1) each worker should get — at temperature 0 the
 * best, ties shared; above it exp(−(best − score) / (best − worst) / temperature), normalised.
 */
class SoftmaxPickerTest {
    private static final int DECISIONS = 20_000;

    static Stream<Arguments> cases() {
        double e5 = Math.exp(-0.5);
        double e1 = Math.exp(-1);
        double sum = 1 + e5 + e1;
        return Stream.of(
                Arguments.of("temperature 0: the best", Map.of("a", 0.2, "b", 0.9, "c", 0.5), 0.0, Map.of("b", 1.0)),
                Arguments.of(
                        "temperature 0: ties drawn at random, not by position",
                        Map.of("a", 1.0, "b", 1.0, "c", 0.0),
                        0.0,
                        Map.of("a", 0.5, "b", 0.5)),
                Arguments.of(
                        "all equal: each as likely, whatever the temperature",
                        Map.of("a", 3.0, "b", 3.0),
                        1.0,
                        Map.of("a", 0.5, "b", 0.5)),
                Arguments.of(
                        "temperature 1: Dynamo's weights over the rescaled costs 0, 0.5, 1",
                        Map.of("a", 1.0, "b", 0.5, "c", 0.0),
                        1.0,
                        Map.of("a", 1 / sum, "b", e5 / sum, "c", e1 / sum)),
                Arguments.of(
                        "the scale of the scores does not matter, only their spread",
                        Map.of("a", 40.0, "b", 20.0, "c", 0.0),
                        1.0,
                        Map.of("a", 1 / sum, "b", e5 / sum, "c", e1 / sum)),
                Arguments.of(
                        "a low temperature: nearly always the best",
                        Map.of("a", 1.0, "b", 0.0),
                        0.1,
                        Map.of("a", 1 / (1 + Math.exp(-10)), "b", Math.exp(-10) / (1 + Math.exp(-10)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void picksAsDynamoSamples(String name, Map<String, Double> scores, double temperature, Map<String, Double> shares) {
        SoftmaxPicker picker = new SoftmaxPicker(new PickerSettings.Softmax(temperature, 1));
        List<Picker.ScoredWorker> scored = new ArrayList<>();
        scores.forEach((id, s) -> scored.add(new Picker.ScoredWorker(w(id, 0), s)));
        Map<String, Integer> picks = new HashMap<>();
        for (long tick = 0; tick < DECISIONS; tick++) {
            String id = picker.pick(new SchedulingRequest(null, null, 16, tick), scored)
                    .id();
            picks.merge(id, 1, Integer::sum);
            // pure: the same tick, in any order of candidates, the same choice
            assertEquals(
                    id,
                    picker.pick(new SchedulingRequest(null, null, 16, tick), reversed(scored))
                            .id());
        }
        for (String id : scores.keySet()) {
            double share = picks.getOrDefault(id, 0) / (double) DECISIONS;
            assertEquals(shares.getOrDefault(id, 0.0), share, 0.015, id + " picked " + picks);
        }
    }

    static Stream<Arguments> draws() {
        return Stream.of(
                Arguments.of(new double[] {1, 1}, 0.0, 0),
                Arguments.of(new double[] {1, 1}, 0.4999, 0),
                Arguments.of(new double[] {1, 1}, 0.5, 1),
                Arguments.of(new double[] {0, 1, 0}, 0.0, 1),
                Arguments.of(new double[] {0, 1, 0}, 0.9999999, 1),
                Arguments.of(new double[] {3, 1}, 0.74, 0),
                Arguments.of(new double[] {3, 1}, 0.76, 1));
    }

    @ParameterizedTest(name = "weights {0}, draw {1}: index {2}")
    @MethodSource("draws")
    void sampleTakesTheCumulativeShare(double[] weights, double u, int expected) {
        assertEquals(expected, SoftmaxPicker.sample(weights, u));
    }

    static Stream<Arguments> seeds() {
        return Stream.of(Arguments.of(0L), Arguments.of(1L), Arguments.of(-7L));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void drawsAreUniformInTheUnitInterval(long seed) {
        SoftmaxPicker picker = new SoftmaxPicker(new PickerSettings.Softmax(1.0, seed));
        double total = 0;
        for (long tick = 0; tick < DECISIONS; tick++) {
            double u = picker.draw(tick);
            assertEquals(true, u >= 0 && u < 1, "draw " + u);
            assertEquals(u, picker.draw(tick));
            total += u;
        }
        assertEquals(0.5, total / DECISIONS, 0.01);
    }

    private static List<Picker.ScoredWorker> reversed(List<Picker.ScoredWorker> scored) {
        List<Picker.ScoredWorker> r = new ArrayList<>(scored);
        java.util.Collections.reverse(r);
        return r;
    }
}
