package dev.tandem.cluster;

/** Names of the Hazelcast structures Tandem shares between nodes. */
public final class ClusterNames {
    /** Member attribute holding a node's stable id (Hazelcast's member UUID changes on merges). */
    public static final String NODE_ID_ATTRIBUTE = "tandem.nodeId";
    /** IMap workerId → {@code WorkerDescriptor} JSON, entries expire unless heartbeats refresh them. */
    public static final String WORKERS = "tandem.workers";
    /** IMap session key → decode worker id, idle TTL and size bound, near cache on routers. */
    public static final String AFFINITY = "tandem.affinity";
    /** FlakeIdGenerator for request ids unique across router replicas. */
    public static final String REQUEST_IDS = "tandem.request-ids";

    /**
     * IMap tokenizer identity → tokenizer image ({@code TokenizerImages}): filed by workers, read by routers
     * that serve a model they did not load. Content-addressed, so entries never change.
     */
    public static final String TOKENIZERS = "tandem.tokenizers";

    /**
     * IMap model name → the fingerprint of the weights that hold it, claimed atomically by the first
     * worker of the model and kept alive by every heartbeat of its workers (TTL as the registry's): a
     * name means one model, even when workers of two start at the same instant.
     */
    public static final String MODELS = "tandem.models";

    /**
     * IMap {@code minute|tenant} → requests and tokens a tenant used in that clock minute, over every router
     * replica ({@code HazelcastTenantQuotas}); entries expire two minutes after their last change.
     */
    public static final String QUOTAS = "tandem.quotas";

    private ClusterNames() {}
}
