package dev.tandem.protocol;

import java.util.regex.Pattern;

/**
 * Every event-bus address Tandem uses. Addresses stand in for the seed's (rank, tag) pairs: a
 * worker's id names its inbox, the suffix names the message kind. Nothing else spells an address.
 */
public final class Addresses {
    private static final String PREFILL = "tandem.prefill.";
    private static final String DECODE = "tandem.decode.";
    private static final String ROUTER = "tandem.router.";
    private static final String WORKER = "tandem.worker.";

    /** Bridge clients send generate requests here (TCP/SockJS bridges). */
    public static final String GENERATE = "tandem.generate";
    /** Bridge clients cancel a request here. */
    public static final String CANCEL = "tandem.cancel";
    /** Every router replica publishes its {@link RouterLoad} here; every router listens. */
    public static final String ROUTER_LOADS = "tandem.routers.load";
    /**
     * Each router publishes a {@link ClusterSnapshot} here, local-only, about once a second while a
     * SockJS client (the web console) listens; bridge clients may only receive on it.
     */
    public static final String CONSOLE_CLUSTER = "tandem.console.cluster";
    /** Every worker with a KV cache publishes its {@link KvCacheEvents} here; every router listens. */
    public static final String KV_EVENTS = "tandem.kv.events";
    /** {@code tandem bench kv}'s receiving end: KV chunks as a decode worker gets them, acknowledged at the last. */
    public static final String BENCH_KV = "tandem.bench.kv";

    /** Prefix of the addresses bridge clients register to receive their tokens. */
    public static final String CLIENT_PREFIX = "tandem.client.";
    /** {@link #CLIENT_PREFIX} and at least one more character, as a bridge permission regex. */
    public static final String CLIENT_REGEX = "tandem\\.client\\..+";

    private static final Pattern CLIENT = Pattern.compile(CLIENT_REGEX);

    /** An external worker joins the cluster by sending its {@link WorkerJoin} here (worker bridge only). */
    public static final String WORKER_JOIN = "tandem.bridge.worker.join";
    /** An external worker's {@link WorkerHeartbeat}s (worker bridge only). */
    public static final String WORKER_HEARTBEAT = "tandem.bridge.worker.heartbeat";
    /** An external worker's cache events (worker bridge only; a worker that announced a {@code kv_cache}). */
    public static final String WORKER_KV_EVENTS = "tandem.bridge.worker.kv-events";
    /** Told to external workers when a router's cluster member leaves: {@code {"node": id}}. */
    public static final String WORKER_ROUTER_LEFT = "tandem.bridge.worker.router-left";
    /** Prefix of the reply addresses the worker bridge hands its workers for messages awaiting an answer. */
    public static final String BRIDGE_REPLY_PREFIX = "tandem.bridge.reply.";

    private static final Pattern DECODE_KV = Pattern.compile("tandem\\.decode\\.(.+)\\.kv");
    private static final Pattern DECODE_CANCEL = Pattern.compile("tandem\\.decode\\.(.+)\\.cancel");
    private static final Pattern ROUTER_TOKENS = Pattern.compile("tandem\\.router\\.(.+)\\.tokens");

    private Addresses() {}

    /** A bridge client's own address, where the router pushes its tokens ({@code id}: e.g. a UUID). */
    public static String client(String id) {
        return CLIENT_PREFIX + id;
    }

    /** True for an address a bridge client may receive on ({@link #CLIENT_REGEX}). */
    public static boolean isClient(String address) {
        return address != null && CLIENT.matcher(address).matches();
    }

    /** The decode worker a {@link #decodeKv} address belongs to, or null for any other address. */
    public static String decodeKvWorker(String address) {
        return group(DECODE_KV, address);
    }

    /** The decode worker a {@link #decodeCancel} address belongs to, or null for any other address. */
    public static String decodeCancelWorker(String address) {
        return group(DECODE_CANCEL, address);
    }

    /** The router a {@link #routerTokens} address belongs to, or null for any other address. */
    public static String routerOfTokens(String address) {
        return group(ROUTER_TOKENS, address);
    }

    private static String group(Pattern pattern, String address) {
        java.util.regex.Matcher m = pattern.matcher(address);
        return m.matches() ? m.group(1) : null;
    }

    /** PREFILL_REQUEST (seed tag 30); the reply is PREFILL_DONE (31). */
    public static String prefill(String workerId) {
        return PREFILL + workerId;
    }

    public static String prefillCancel(String workerId) {
        return PREFILL + workerId + ".cancel";
    }

    /** KV_CACHE chunks (32); the reply to the last chunk is KV_CACHE_ACK (33). */
    public static String decodeKv(String workerId) {
        return DECODE + workerId + ".kv";
    }

    /** A {@link KvHandle} in place of KV chunks, for workers whose upstream moves the KV itself. */
    public static String decodeKvHandle(String workerId) {
        return DECODE + workerId + ".kv-handle";
    }

    /**
     * Tokenizing for a model whose workers front an upstream server: {@code {"text", "add_special_tokens"}}
     * to any of them (the event bus picks one), answered {@code {"tokens": [...]}} from its upstream.
     */
    public static String tokenize(String model) {
        return "tandem.tokenize." + model;
    }

    /** DECODE_REQUEST (34). */
    public static String decodeStart(String workerId) {
        return DECODE + workerId + ".start";
    }

    public static String decodeCancel(String workerId) {
        return DECODE + workerId + ".cancel";
    }

    /** DECODE_TOKEN (35) and DECODE_DONE (36) for every request a router node owns. */
    public static String routerTokens(String routerId) {
        return ROUTER + routerId + ".tokens";
    }

    /**
     * A prefill worker's first token, sent as soon as it is computed — ahead of its KV hand-over and of
     * PREFILL_DONE, which still follows — to the router that asked for it.
     */
    public static String routerFirstTokens(String routerId) {
        return ROUTER + routerId + ".first-token";
    }

    /** Puts a worker into drain ({@code {"draining": true}}) or back into service; the reply is its status. */
    public static String workerDrain(String workerId) {
        return WORKER + workerId + ".drain";
    }

    /** A worker's {@link KvCacheSnapshot}: every block its KV caches hold (the body is {@code {}}). */
    public static String kvSnapshot(String workerId) {
        return WORKER + workerId + ".kv-snapshot";
    }

    /** A worker's status: active sequences, parked KV, bytes held. */
    public static String workerStatus(String workerId) {
        return WORKER + workerId + ".status";
    }
}
