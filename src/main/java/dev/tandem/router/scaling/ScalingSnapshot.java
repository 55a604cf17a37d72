package dev.tandem.router.scaling;

/**
 * One model's load as the scaling advisor reads it: the token rates measured over the window and the
 * workers' state from the registry.
 *
 * @param model                      the model's name
 * @param uncachedPromptTokensPerSec prompt tokens arriving per second that a prefill worker must compute (not
 *                                   reused from a cache, not prefilled on a decode worker)
 * @param outputTokensPerSec         output tokens delivered per second (what decode load follows; reported)
 * @param queuedPrefillTokens        prompt tokens waiting for or in prefill on the model's prefill workers
 * @param prefillWorkers             prefill workers serving now (draining ones not counted)
 * @param prefillTokensPerSecPerWorker a prefill worker's measured rate (mean over those that measured one); 0: none
 * @param decodeWorkers              decode workers serving now
 * @param activeSequences            sequences in or waiting for the decode batches
 * @param batchCapPerWorker          a decode worker's batch cap ({@code worker.max-batch}); 0: unknown
 * @param kvBytesUsed                KV memory the decode workers hold
 * @param kvBytesCapacityPerWorker   a decode worker's KV capacity; 0: unknown
 */
public record ScalingSnapshot(
        String model,
        double uncachedPromptTokensPerSec,
        double outputTokensPerSec,
        long queuedPrefillTokens,
        int prefillWorkers,
        double prefillTokensPerSecPerWorker,
        int decodeWorkers,
        long activeSequences,
        int batchCapPerWorker,
        long kvBytesUsed,
        long kvBytesCapacityPerWorker) {}
