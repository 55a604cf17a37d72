package dev.tandem.protocol;

/**
 * How a request's tokens are drawn, as it travels to the workers: temperature 0 is greedy, top-k 0
 * and top-p 1 mean no cut, and the seed with a token's position fixes the draw (so a request resumed
 * elsewhere continues exactly). The wire's own record: workers hand it to their engine's sampler.
 */
public record Sampling(double temperature, double topP, int topK, long seed) {

    public static final Sampling GREEDY = new Sampling(0.0, 1.0, 0, 0L);

    public Sampling {
        if (!(temperature >= 0) || Double.isInfinite(temperature)) {
            throw new ProtocolException("temperature must be a finite number >= 0");
        }
        if (!(topP > 0 && topP <= 1)) {
            throw new ProtocolException("top_p must be in (0, 1]");
        }
        if (topK < 0) {
            throw new ProtocolException("top_k must be >= 0");
        }
    }
}
