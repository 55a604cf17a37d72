package dev.tandem.router.scheduling;

import dev.tandem.protocol.CacheSpec;
import dev.tandem.protocol.WorkerView;
import java.util.Map;

/**
 * A prompt's KV block hashes per model fingerprint, cut at the block size that model's workers announce
 * ({@code protocol/BlockHashes}): what a plugin that remembers prefixes looks up and records.
 *
 * @param byModel per model fingerprint, the block size and the prompt's block hashes at it
 */
public record PromptHashes(Map<Long, Hashes> byModel) {
    public static final PromptHashes NONE = new PromptHashes(Map.of());

    private static final long[] NO_BLOCKS = new long[0];

    /** A model's block size and the prompt's block hashes in it. */
    public record Hashes(int blockSize, long[] blocks) {}

    public PromptHashes {
        byModel = Map.copyOf(byModel);
    }

    /**
     * The prompt's block hashes as {@code worker}'s cache would name them; none when it announces no cache
     * or hashes with another block size than its model's first.
     */
    public long[] blocksFor(WorkerView worker) {
        CacheSpec spec = worker.worker().cache();
        Hashes h = byModel.get(worker.modelFingerprint());
        return spec == null || h == null || h.blockSize() != spec.blockSize() ? NO_BLOCKS : h.blocks();
    }
}
