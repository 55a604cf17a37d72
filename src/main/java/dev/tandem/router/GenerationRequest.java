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
 * @param model       the model it runs on: its workers, tokenizer and context
 * @param flow        its tenant, priority, quotas, deadline and TTFT target
 */
public record GenerationRequest(
        int[] promptTokens,
        int maxTokens,
        Sampling sampling,
        int[] stopTokens,
        List<String> stopStrings,
        String sessionKey,
        ServedModel model,
        RequestClass flow) {

    /** A request of the default tenant with no deadline or target of its own. */
    public GenerationRequest(
            int[] promptTokens,
            int maxTokens,
            Sampling sampling,
            int[] stopTokens,
            List<String> stopStrings,
            String sessionKey,
            ServedModel model) {
        this(promptTokens, maxTokens, sampling, stopTokens, stopStrings, sessionKey, model, RequestClass.DEFAULT);
    }

    /** This request, classified. */
    public GenerationRequest withFlow(RequestClass flow) {
        return new GenerationRequest(
                promptTokens, maxTokens, sampling, stopTokens, stopStrings, sessionKey, model, flow);
    }

    /**
     * Where the session's decode worker is recorded: per model, so a session that talks to two models
     * keeps a warm worker for each. Null without a session.
     */
    public String affinityKey() {
        return sessionKey == null ? null : affinityKey(model.name(), sessionKey);
    }

    /** The affinity record of a session with one model (length-prefixed: no name and key can collide). */
    public static String affinityKey(String modelName, String sessionKey) {
        return modelName.length() + ":" + modelName + ":" + sessionKey;
    }
}
