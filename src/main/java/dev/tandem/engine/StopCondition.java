package dev.tandem.engine;

import dev.tandem.engine.tokenizer.Tokenizer;

/**
 * When a generated sequence ends. One definition, used by the single-process generator, the decode
 * batch and the router (for the first token), so a disaggregated run stops exactly where a local one
 * does.
 */
public final class StopCondition {

    /** What a newly generated token does to its sequence. */
    public enum Outcome {
        /** Keep the token and go on. */
        CONTINUE,
        /** The token is a stop token: drop it, finish with "stop". */
        STOP,
        /** Keep the token, finish with "length" (max tokens or context reached). */
        LENGTH;

        public boolean finished() {
            return this != CONTINUE;
        }

        /** The OpenAI finish_reason for a finished outcome. */
        public String finishReason() {
            return this == STOP ? "stop" : "length";
        }
    }

    private final Tokenizer tokenizer;
    private final int[] stopTokens;
    private final int maxNewTokens;
    private final int promptTokens;
    private final int contextLength;

    public StopCondition(Tokenizer tokenizer, int[] stopTokens, int maxNewTokens, int promptTokens, int contextLength) {
        this.tokenizer = tokenizer;
        this.stopTokens = stopTokens.clone();
        this.maxNewTokens = maxNewTokens;
        this.promptTokens = promptTokens;
        this.contextLength = contextLength;
    }

    /**
     * @param token     the token just generated
     * @param generated how many tokens have been generated including this one (the first token is 1)
     */
    public Outcome check(int token, int generated) {
        if (tokenizer.isEndOfSequence(token)) {
            return Outcome.STOP;
        }
        for (int s : stopTokens) {
            if (s == token) {
                return Outcome.STOP;
            }
        }
        if (generated >= maxNewTokens || promptTokens + generated >= contextLength) {
            return Outcome.LENGTH;
        }
        return Outcome.CONTINUE;
    }
}
