package dev.tandem.router;

import dev.tandem.engine.SamplingParams;

/**
 * A validated, tokenized request as the router schedules it, whatever API it came through.
 *
 * @param sessionKey affinity key (OpenAI {@code user} or {@code X-Session-Id}), or null
 */
public record GenerationRequest(int[] promptTokens, int maxTokens, SamplingParams sampling, int[] stopTokens,
                                String sessionKey) {
}
