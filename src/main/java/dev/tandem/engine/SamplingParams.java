package dev.tandem.engine;

/**
 * How the next token is chosen. Temperature 0 is greedy (argmax). topK 0 means no top-k cut; topP 1
 * means no nucleus cut. The seed and the token's position fully determine the random draw.
 */
public record SamplingParams(double temperature, double topP, int topK, long seed) {

    public static final SamplingParams GREEDY = new SamplingParams(0.0, 1.0, 0, 0L);

    public SamplingParams {
        if (!(temperature >= 0) || Double.isInfinite(temperature)) {
            throw new IllegalArgumentException("temperature must be a finite number >= 0");
        }
        if (!(topP > 0 && topP <= 1)) {
            throw new IllegalArgumentException("top_p must be in (0, 1]");
        }
        if (topK < 0) {
            throw new IllegalArgumentException("top_k must be >= 0");
        }
    }
}
