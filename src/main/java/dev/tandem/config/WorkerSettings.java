package dev.tandem.config;

/**
 * Limits and timings of prefill and decode workers.
 *
 * @param maxKvTransferBytes     the seed's {@code max_kv_transfer_bytes}: the most KV one request may ship
 * @param kvChunkBytes           largest KV chunk sent as one event-bus message
 * @param kvParkTimeoutMs        how long a decode worker keeps KV whose DECODE_REQUEST has not come
 * @param maxBatch               sequences one decode step advances at most; more wait to join
 * @param prefillConcurrency     prompts one prefill worker computes at once; more wait in its queue
 * @param kvCapacityBytes        KV memory a decode worker may hold (batch, parked, incoming and kept blocks);
 *                               beyond it new KV is refused as over capacity and the router picks another
 *                               worker. {@link #AUTO} until the node's memory budget gives it its share
 *                               ({@code MemoryBudget}); a number above that share is lowered to it
 * @param maxQueuedPrefillTokens prompt tokens a prefill worker accepts into its queue; beyond, it answers busy
 *                               (a single prompt is always accepted by an idle worker)
 * @param maxWaitingSequences    sequences a decode worker holds beyond its batch, waiting for a slot; beyond,
 *                               it refuses new KV as over capacity
 * @param prefixCacheBytes       KV memory a prefill worker keeps of computed prompt blocks for prompts that share
 *                               their prefix (0 = no prefix cache); a decode worker keeps finished sequences' blocks
 *                               within {@code kvCapacityBytes} instead. {@link #AUTO} and lowering as for
 *                               {@code kvCapacityBytes}
 * @param httpPort               port of a worker node's health and metrics server; -1 = none (so several
 *                               workers can share a machine), 0 = any free port
 * @param localPrefillChunkTokens prompt tokens a decode worker computes of a local prefill between two of
 *                               its decode steps (chunked prefill): the running sequences wait for at most
 *                               one chunk, not the whole prompt; with none running, the rest goes at once
 */
public record WorkerSettings(
        int kvBlockSize,
        long maxKvTransferBytes,
        int kvChunkBytes,
        long kvParkTimeoutMs,
        int maxBatch,
        int prefillConcurrency,
        long heartbeatMs,
        long registryTtlMs,
        long kvCapacityBytes,
        long prefixCacheBytes,
        int maxQueuedPrefillTokens,
        int maxWaitingSequences,
        int httpPort,
        int localPrefillChunkTokens) {

    /**
     * 252 KiB: a chunk's event-bus frame (its headers take a few hundred bytes) then fits a 256 KiB buffer.
     * A 256 KiB chunk's frame grows to 512 KiB on the sender, and the receiver's record parser doubles
     * its buffer once more; bench kv's allocation profile: 5.8 bytes allocated per byte carried → 5.0.
     */
    public static final int DEFAULT_KV_CHUNK_BYTES = 252 << 10;

    /**
     * 128 tokens: on the 70B sim profile 11 to 25 ms of compute (more the longer the context), so a step
     * that waits behind a chunk keeps a running sequence's gap under about two steps; a worker with no
     * sequence to step computes the rest at once (benchmarks.md, "What the benchmark changed in scheduling").
     */
    public static final int DEFAULT_LOCAL_PREFILL_CHUNK_TOKENS = 128;

    /** {@code auto}: the capacity is the worker's share of the node's memory budget, set at start-up. */
    public static final long AUTO = ConfigSection.AUTO;

    static WorkerSettings read(ConfigSection s) {
        WorkerSettings w = new WorkerSettings(
                s.integer("kv-block-size", 16, 1, 4096),
                s.integer("max-kv-transfer-bytes", 256L << 20, 1024, 1L << 40),
                s.integer("kv-chunk-bytes", DEFAULT_KV_CHUNK_BYTES, 4096, 64 << 20),
                s.integer("kv-park-timeout-ms", 10_000L, 10, 3_600_000),
                s.integer("max-batch", 64, 1, 4096),
                s.integer("prefill-concurrency", 1, 1, 64),
                s.integer("heartbeat-ms", 250L, 10, 60_000),
                s.integer("registry-ttl-ms", 3_000L, 100, 600_000),
                s.bytesOrAuto("kv-capacity-bytes", 0, 1L << 44),
                s.bytesOrAuto("prefix-cache-bytes", 0, 1L << 44),
                s.integer("max-queued-prefill-tokens", 65_536, 1, 1 << 30),
                s.integer("max-waiting-sequences", 64, 0, 1 << 20),
                s.integer("http-port", -1, -1, 65535),
                s.integer("local-prefill-chunk-tokens", DEFAULT_LOCAL_PREFILL_CHUNK_TOKENS, 16, 1 << 20));
        s.rejectUnknownKeys();
        if (w.registryTtlMs < 2 * w.heartbeatMs) {
            throw new ConfigException("'worker.registry-ttl-ms' must be at least twice 'worker.heartbeat-ms'");
        }
        return w;
    }

    public WorkerSettings withKvCapacityBytes(long bytes) {
        return new WorkerSettings(
                kvBlockSize,
                maxKvTransferBytes,
                kvChunkBytes,
                kvParkTimeoutMs,
                maxBatch,
                prefillConcurrency,
                heartbeatMs,
                registryTtlMs,
                bytes,
                prefixCacheBytes,
                maxQueuedPrefillTokens,
                maxWaitingSequences,
                httpPort,
                localPrefillChunkTokens);
    }

    public WorkerSettings withPrefixCacheBytes(long bytes) {
        return new WorkerSettings(
                kvBlockSize,
                maxKvTransferBytes,
                kvChunkBytes,
                kvParkTimeoutMs,
                maxBatch,
                prefillConcurrency,
                heartbeatMs,
                registryTtlMs,
                kvCapacityBytes,
                bytes,
                maxQueuedPrefillTokens,
                maxWaitingSequences,
                httpPort,
                localPrefillChunkTokens);
    }
}
