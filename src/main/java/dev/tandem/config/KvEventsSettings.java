package dev.tandem.config;

import java.util.regex.Pattern;

/**
 * An upstream GPU server's KV cache event stream (vLLM's {@code --kv-events-config}, SGLang's
 * {@code --kv-events-config}): ZeroMQ endpoints the worker connects to, so that routers see what the
 * engine's prefix cache holds. Keys beside the other upstream settings in {@code model}.
 *
 * @param endpoint       the engine's PUB socket, {@code tcp://host:port} (empty: no events; the worker
 *                       announces no cache, as before)
 * @param replayEndpoint the engine's ROUTER socket that resends missed batches (empty: a gap in the
 *                       sequence drops what the worker knew until the stream starts over)
 * @param topic          the topic the engine publishes under (empty: every message)
 */
public record KvEventsSettings(String endpoint, String replayEndpoint, String topic) {

    public static final KvEventsSettings NONE = new KvEventsSettings("", "", "");

    /** What ZeroMQ can connect to: a host (or bracketed IPv6) and a port, or an ipc path. */
    private static final Pattern ENDPOINT =
            Pattern.compile("tcp://(\\[[0-9A-Fa-f:.]+]|[^:/\\s*]+):\\d{1,5}|ipc://\\S+");

    public KvEventsSettings {
        check("model.upstream-kv-events-endpoint", endpoint);
        check("model.upstream-kv-events-replay-endpoint", replayEndpoint);
        if (endpoint.isBlank() && !replayEndpoint.isBlank()) {
            throw new ConfigException(
                    "model.upstream-kv-events-replay-endpoint needs model.upstream-kv-events-endpoint");
        }
    }

    static KvEventsSettings read(ConfigSection s) {
        return new KvEventsSettings(
                s.string("upstream-kv-events-endpoint", ""),
                s.string("upstream-kv-events-replay-endpoint", ""),
                s.string("upstream-kv-events-topic", ""));
    }

    /** Whether an event stream is configured. */
    public boolean enabled() {
        return !endpoint.isBlank();
    }

    public KvEventsSettings withEndpoint(String endpoint) {
        return new KvEventsSettings(endpoint, replayEndpoint, topic);
    }

    public KvEventsSettings withReplayEndpoint(String replayEndpoint) {
        return new KvEventsSettings(endpoint, replayEndpoint, topic);
    }

    private static void check(String key, String value) {
        if (!value.isBlank() && !ENDPOINT.matcher(value).matches()) {
            throw new ConfigException(key + " must be tcp://host:port (the engine's address, not tcp://*:port) or"
                    + " ipc://path, got '" + value + "'");
        }
    }
}
