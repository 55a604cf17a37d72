package dev.tandem.config;

import java.util.List;

/**
 * The router's HTTP listener.
 *
 * @param keys when not empty ({@code http.api-keys}, see {@link ApiKeySpec}), {@code /v1/*} and {@code /admin/*} require {@code Authorization: Bearer <one of
 *                them>}, and SockJS and TCP bridge frames carry that value in their own headers
 * @param idleTimeoutMs a connection (HTTP, SSE, WebSocket, SockJS) with no byte read or written for this long
 *                is closed; 0 = never
 * @param requestReadTimeoutMs a request whose head and body (or a WebSocket message whose frames) take longer
 *                than this to arrive is refused (408) or closed: a client trickling bytes holds a buffer; 0 = never
 * @param metricsPublic with API keys set, whether {@code /metrics} and {@code /ready} stay open (for scrapers and
 *                probes that carry no key) or need a key like {@code /v1/*}; {@code /health} is always open
 * @param tls     TLS of the port (with it, HTTP/2 is offered by ALPN beside HTTP/1.1)
 * @param plainPort with TLS, a clear-text listener beside it on this port (-1 = none): it serves the API while
 *                {@code tls-required} is false (a migration), and refuses every request when it is true
 * @param connections connection limits of both listeners together
 */
public record HttpSettings(
        String host,
        int port,
        long maxBodyBytes,
        List<ApiKeySpec> keys,
        long idleTimeoutMs,
        long requestReadTimeoutMs,
        boolean metricsPublic,
        TlsSettings tls,
        int plainPort,
        ConnectionLimits connections) {

    public HttpSettings(
            String host,
            int port,
            long maxBodyBytes,
            List<ApiKeySpec> keys,
            long idleTimeoutMs,
            long requestReadTimeoutMs,
            boolean metricsPublic) {
        this(
                host,
                port,
                maxBodyBytes,
                keys,
                idleTimeoutMs,
                requestReadTimeoutMs,
                metricsPublic,
                TlsSettings.NONE,
                -1,
                ConnectionLimits.NONE);
    }

    static HttpSettings read(ConfigSection s) {
        HttpSettings h = new HttpSettings(
                s.string("host", "127.0.0.1"),
                s.integer("port", 8080, 0, 65535),
                s.integer("max-body-bytes", 1L << 20, 1024, 1L << 30),
                apiKeys(s),
                s.integer("idle-timeout-ms", 120_000L, 0, 86_400_000L),
                s.integer("request-read-timeout-ms", 30_000L, 0, 3_600_000L),
                s.bool("metrics-public", true),
                TlsSettings.read(s),
                (int) s.integer("plain-port", -1, -1, 65535),
                ConnectionLimits.read(s, 16_384));
        s.rejectUnknownKeys();
        if (h.plainPort >= 0 && !h.tls.enabled()) {
            throw new ConfigException("'http.plain-port' is a clear-text listener beside a TLS one: set 'http.tls-cert'"
                    + " and 'http.tls-key' too, or use 'http.port'");
        }
        return h;
    }

    /** The keys alone, for the checks that only ask whether a key is one of them. */
    public List<String> apiKeys() {
        return keys.stream().map(ApiKeySpec::key).toList();
    }

    /** Entries are keys, {@code KEY:tenant=T:...} strings, or mappings ({@link ApiKeySpec}). */
    private static List<ApiKeySpec> apiKeys(ConfigSection s) {
        List<ApiKeySpec> out = new java.util.ArrayList<>();
        for (ConfigSection entry : s.namesOrSections("api-keys", "key")) {
            out.add(ApiKeySpec.read(entry.expandKeyString()));
        }
        if (out.stream().map(ApiKeySpec::key).distinct().count() != out.size()) {
            throw new ConfigException("'http.api-keys' lists a key twice");
        }
        return List.copyOf(out);
    }

    public HttpSettings withPort(int port) {
        return new HttpSettings(
                host,
                port,
                maxBodyBytes,
                keys,
                idleTimeoutMs,
                requestReadTimeoutMs,
                metricsPublic,
                tls,
                plainPort,
                connections);
    }

    public HttpSettings withTls(TlsSettings tls, int plainPort) {
        return new HttpSettings(
                host,
                port,
                maxBodyBytes,
                keys,
                idleTimeoutMs,
                requestReadTimeoutMs,
                metricsPublic,
                tls,
                plainPort,
                connections);
    }

    public HttpSettings withConnections(ConnectionLimits connections) {
        return new HttpSettings(
                host,
                port,
                maxBodyBytes,
                keys,
                idleTimeoutMs,
                requestReadTimeoutMs,
                metricsPublic,
                tls,
                plainPort,
                connections);
    }
}
