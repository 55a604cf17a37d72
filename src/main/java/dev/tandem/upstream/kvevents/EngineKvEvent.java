package dev.tandem.upstream.kvevents;

/**
 * One change of a GPU engine's prefix cache, as vLLM and SGLang publish it ({@code BlockStored},
 * {@code BlockRemoved}, {@code AllBlocksCleared}). Engine block hashes are opaque: integers, or bytes
 * folded to 64 bits ({@link EngineKvBatchDecoder}); they only name blocks.
 */
public sealed interface EngineKvEvent {

    /**
     * Consecutive full blocks stored after {@code parent}.
     *
     * @param hashes    the blocks' engine hashes, in order
     * @param hasParent false for blocks that start a prompt
     * @param parent    the engine hash of the block before the first (when {@code hasParent})
     * @param tokens    every block's token ids, {@code blockSize} per block
     * @param blockSize the engine's block (page) size
     * @param keyed     per block: stored under more than its tokens (a LoRA adapter, multimodal inputs, a
     *                  cache salt), so a plain prompt of the same tokens never hits it
     * @param lowerTier stored in a tier below the GPU's memory ({@code medium} other than {@code GPU})
     */
    record Stored(
            long[] hashes,
            boolean hasParent,
            long parent,
            int[] tokens,
            int blockSize,
            boolean[] keyed,
            boolean lowerTier)
            implements EngineKvEvent {}

    /** Blocks no longer held in that tier. */
    record Removed(long[] hashes, boolean lowerTier) implements EngineKvEvent {}

    /** Everything gone (the engine's cache was reset). */
    record Cleared() implements EngineKvEvent {}
}
