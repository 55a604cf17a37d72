package dev.tandem.config;

import java.util.List;

/**
 * OpenTelemetry tracing ({@code tracing.*}): off by default. When on, every sampled request becomes one
 * trace across the router and worker processes, exported over OTLP.
 *
 * @param enabled    whether spans are made and exported at all
 * @param endpoint   the collector: for {@code grpc} its base URL ({@code http://host:4317}); for the two
 *                   HTTP protocols the full traces URL ({@code http://host:4318/v1/traces}); empty takes
 *                   the protocol's default on localhost, as the OpenTelemetry SDKs do
 * @param protocol   {@code grpc}, {@code http/protobuf} or {@code http/json}
 * @param sampleRate the share of new traces kept (0 to 1); a request that arrives with a sampled
 *                   {@code traceparent} is always traced, one arriving unsampled never (parent-based)
 */
public record TracingSettings(boolean enabled, String endpoint, String protocol, double sampleRate) {

    public static final List<String> PROTOCOLS = List.of("grpc", "http/protobuf", "http/json");

    public static final TracingSettings OFF = new TracingSettings(false, "", "http/protobuf", 0.1);

    public TracingSettings {
        if (!PROTOCOLS.contains(protocol)) {
            throw new ConfigException("tracing.protocol must be one of " + PROTOCOLS + ", got '" + protocol + "'");
        }
        if (!endpoint.isBlank() && !endpoint.matches("https?://[^\\s/]+(/\\S*)?")) {
            throw new ConfigException("tracing.endpoint must be an http:// or https:// URL, got '" + endpoint + "'");
        }
    }

    static TracingSettings read(ConfigSection s) {
        TracingSettings t = new TracingSettings(
                s.bool("enabled", false),
                s.string("endpoint", ""),
                s.choice("protocol", "http/protobuf", PROTOCOLS),
                s.decimal("sample-rate", 0.1, 0, 1));
        s.rejectUnknownKeys();
        return t;
    }

    /** The collector URL this protocol sends to: the configured one, or the protocol's default. */
    public String exportUrl() {
        if (!endpoint.isBlank()) {
            return endpoint;
        }
        return protocol.equals("grpc") ? "http://localhost:4317" : "http://localhost:4318/v1/traces";
    }

    public TracingSettings withEnabled(boolean enabled) {
        return new TracingSettings(enabled, endpoint, protocol, sampleRate);
    }

    public TracingSettings withEndpoint(String endpoint, String protocol) {
        return new TracingSettings(enabled, endpoint, protocol, sampleRate);
    }

    public TracingSettings withSampleRate(double sampleRate) {
        return new TracingSettings(enabled, endpoint, protocol, sampleRate);
    }
}
