package dev.tandem.config;

import java.util.List;

/**
 * The router's HTTP listener.
 *
 * @param apiKeys when not empty, {@code /v1/*} and {@code /admin/*} require {@code Authorization: Bearer <one of
 *                them>}, and SockJS bridge frames carry that value in their own headers
 */
public record HttpSettings(String host, int port, long maxBodyBytes, List<String> apiKeys) {

    static HttpSettings read(ConfigSection s) {
        HttpSettings h = new HttpSettings(
                s.string("host", "127.0.0.1"),
                s.integer("port", 8080, 0, 65535),
                s.integer("max-body-bytes", 1L << 20, 1024, 1L << 30),
                List.copyOf(s.strings("api-keys")));
        s.rejectUnknownKeys();
        if (h.apiKeys.stream().anyMatch(String::isBlank)) {
            throw new ConfigException("'http.api-keys' must not contain empty keys");
        }
        return h;
    }

    public HttpSettings withPort(int port) {
        return new HttpSettings(host, port, maxBodyBytes, apiKeys);
    }

    public HttpSettings withMaxBodyBytes(long bytes) {
        return new HttpSettings(host, port, bytes, apiKeys);
    }

    public HttpSettings withApiKeys(List<String> keys) {
        return new HttpSettings(host, port, maxBodyBytes, List.copyOf(keys));
    }
}
