package dev.tandem.config;

import java.lang.reflect.RecordComponent;
import java.util.List;

/**
 * The settings changes only tests make, as test-side builders: each returns a copy of a settings record
 * with one part changed. The ones the CLI needs ({@code --http-port}, {@code --model}, ...) stay on the
 * records.
 */
public final class TestSettings {
    private TestSettings() {}

    /**
     * {@code settings} with the named components replaced ({@code name, value, name, value, ...}): the
     * record's canonical constructor, called with every other component as it was.
     */
    static <R extends Record> R with(R settings, Object... changes) {
        RecordComponent[] components = settings.getClass().getRecordComponents();
        Object[] values = new Object[components.length];
        Class<?>[] types = new Class<?>[components.length];
        try {
            for (int i = 0; i < components.length; i++) {
                values[i] = components[i].getAccessor().invoke(settings);
                types[i] = components[i].getType();
            }
            for (int c = 0; c < changes.length; c += 2) {
                values[index(components, (String) changes[c])] = changes[c + 1];
            }
            @SuppressWarnings("unchecked")
            R changed = (R) settings.getClass().getDeclaredConstructor(types).newInstance(values);
            return changed;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int index(RecordComponent[] components, String name) {
        for (int i = 0; i < components.length; i++) {
            if (components[i].getName().equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no component " + name);
    }

    public static BridgeSettings withMaxFrameBytes(BridgeSettings r, int bytes) {
        return with(r, "maxFrameBytes", bytes);
    }

    public static BridgeSettings withSockjs(BridgeSettings r, boolean enabled) {
        return with(r, "sockjs", enabled);
    }

    public static BridgeSettings withTimeouts(BridgeSettings r, long idleMs, long frameReadMs) {
        return with(r, "idleTimeoutMs", idleMs, "frameReadTimeoutMs", frameReadMs);
    }

    public static ClusterSettings withHazelcastConfig(ClusterSettings r, String path) {
        return with(r, "hazelcastConfig", path);
    }

    public static HttpSettings withMaxBodyBytes(HttpSettings r, long bytes) {
        return with(r, "maxBodyBytes", bytes);
    }

    public static HttpSettings withApiKeys(HttpSettings r, List<String> keys) {
        return with(
                r,
                "keys",
                keys.stream()
                        .map(k -> new ApiKeySpec(k, ApiKeySpec.defaultTenant(k), null))
                        .toList());
    }

    public static HttpSettings withTimeouts(HttpSettings r, long idleMs, long requestReadMs) {
        return with(r, "idleTimeoutMs", idleMs, "requestReadTimeoutMs", requestReadMs);
    }

    public static HttpSettings withMetricsPublic(HttpSettings r, boolean open) {
        return with(r, "metricsPublic", open);
    }

    public static ModelSettings withPacing(ModelSettings r, long decodeStepMicros, long prefillMicrosPerToken) {
        return with(
                r,
                "emulatedDecodeStepMicros",
                decodeStepMicros,
                "emulatedPrefillMicrosPerToken",
                prefillMicrosPerToken);
    }

    /** These settings with {@code name}'s profiles, as if the file set only {@code router.policy}. */
    public static RouterSettings withPolicy(RouterSettings r, String name) {
        SchedulingPolicy p = SchedulingPolicy.named(name);
        return with(r, "policy", p.name(), "prefill", p.prefill(), "decode", p.decode());
    }

    public static RouterSettings withMaxInFlight(RouterSettings r, int max) {
        return with(r, "maxInFlight", max);
    }

    public static RouterSettings withRequestTimeoutMs(RouterSettings r, long ms) {
        return with(r, "requestTimeoutMs", ms);
    }

    public static RouterSettings withLocalPrefillMaxTokens(RouterSettings r, int tokens) {
        return with(r, "localPrefillMaxTokens", tokens);
    }

    public static RouterSettings withDecodeStallTimeoutMs(RouterSettings r, long ms) {
        return with(r, "decodeStallTimeoutMs", ms);
    }

    public static TandemConfig withMemory(TandemConfig r, MemorySettings memory) {
        return with(r, "memory", memory);
    }

    public static TandemConfig withRouter(TandemConfig r, RouterSettings router) {
        return with(r, "router", router);
    }

    public static UpstreamSettings withTimeouts(UpstreamSettings r, long timeoutMs, long pollMs, long startTimeoutMs) {
        return with(r, "timeoutMs", timeoutMs, "pollMs", pollMs, "startTimeoutMs", startTimeoutMs);
    }

    public static WorkerBridgeSettings withToken(WorkerBridgeSettings r, String newToken) {
        return with(r, "token", newToken);
    }

    public static WorkerBridgeSettings withAllowNoToken(WorkerBridgeSettings r, boolean allow) {
        return with(r, "allowNoToken", allow);
    }

    public static WorkerBridgeSettings withFailedJoins(
            WorkerBridgeSettings r, WorkerBridgeSettings.FailedJoins limits) {
        return with(r, "failedJoins", limits);
    }

    public static WorkerSettings withMaxKvTransferBytes(WorkerSettings r, long bytes) {
        return with(r, "maxKvTransferBytes", bytes);
    }

    public static WorkerSettings withKvParkTimeoutMs(WorkerSettings r, long ms) {
        return with(r, "kvParkTimeoutMs", ms);
    }

    public static WorkerSettings withQueueLimits(
            WorkerSettings r, int maxBatch, int maxWaitingSequences, int maxQueuedPrefillTokens) {
        return with(
                r,
                "maxBatch",
                maxBatch,
                "maxWaitingSequences",
                maxWaitingSequences,
                "maxQueuedPrefillTokens",
                maxQueuedPrefillTokens);
    }

    public static WorkerSettings withHttpPort(WorkerSettings r, int port) {
        return with(r, "httpPort", port);
    }

    public static WorkerSettings withHeartbeat(WorkerSettings r, long heartbeatMs, long registryTtlMs) {
        return with(r, "heartbeatMs", heartbeatMs, "registryTtlMs", registryTtlMs);
    }
}
