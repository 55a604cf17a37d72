package dev.tandem.router;

import dev.tandem.protocol.Sampling;
import java.util.List;

/**
 * A validated, tokenized request as the router schedules it, whatever API it came through.
 *
 * @param stopTokens  token ids that end generation (excluded from the output)
 * @param stopStrings texts that end generation, matched on the decoded text across token boundaries
 *                    and never included in the output
 * @param sessionKey  affinity key (OpenAI {@code user} or {@code X-Session-Id}), or null
 */
public record GenerationRequest(
        int[] promptTokens,
        int maxTokens,
        Sampling sampling,
        int[] stopTokens,
        List<String> stopStrings,
        String sessionKey) {}
