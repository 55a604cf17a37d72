package dev.tandem.config;

import java.net.URI;
import java.util.List;
import java.util.Locale;

/**
 * The upstream server a worker of engine {@code openai} fronts: an OpenAI-compatible vLLM or SGLang
 * instance running in prefill or decode mode, which moves the KV itself (NIXL, Mooncake).
 *
 * @param url              the upstream's base URL ({@code http://host:port}, no {@code /v1})
 * @param protocol         {@code vllm} ({@code kv_transfer_params}) or {@code sglang} (bootstrap room)
 * @param timeoutMs        a prefill answer, a decode stream's headers and every gap between its chunks
 *                         must come within this; past it the upstream counts as failed
 * @param pollMs           how often {@code /health} and {@code /metrics} are read into the worker's load
 * @param startTimeoutMs   how long a worker waits at start for the upstream's {@code /v1/models}
 * @param vocabSize        the vocabulary's size; 0 = find it by asking {@code /detokenize}
 * @param bootstrapHost    SGLang: the prefill server's bootstrap host (empty = the upstream URL's host)
 * @param bootstrapPort    SGLang: the prefill server's {@code --disaggregation-bootstrap-port}
 * @param kvEvents         where the upstream publishes its KV cache events (ZeroMQ), or none
 */
public record UpstreamSettings(
        String url,
        String protocol,
        long timeoutMs,
        long pollMs,
        long startTimeoutMs,
        int vocabSize,
        String bootstrapHost,
        int bootstrapPort,
        KvEventsSettings kvEvents) {

    public static final String VLLM = "vllm";
    public static final String SGLANG = "sglang";
    public static final List<String> PROTOCOLS = List.of(VLLM, SGLANG);
    public static final UpstreamSettings NONE = new UpstreamSettings("", VLLM, 30_000, 1_000, 60_000, 0, "", 8998);

    /** An upstream that publishes no KV events. */
    public UpstreamSettings(
            String url,
            String protocol,
            long timeoutMs,
            long pollMs,
            long startTimeoutMs,
            int vocabSize,
            String bootstrapHost,
            int bootstrapPort) {
        this(
                url,
                protocol,
                timeoutMs,
                pollMs,
                startTimeoutMs,
                vocabSize,
                bootstrapHost,
                bootstrapPort,
                KvEventsSettings.NONE);
    }

    static UpstreamSettings read(ConfigSection s) {
        UpstreamSettings u = new UpstreamSettings(
                s.string("upstream-url", ""),
                s.choice("upstream-protocol", VLLM, PROTOCOLS).toLowerCase(Locale.ROOT),
                s.integer("upstream-timeout-ms", 30_000L, 100, 3_600_000),
                s.integer("upstream-poll-ms", 1_000L, 10, 600_000),
                s.integer("upstream-start-timeout-ms", 60_000L, 0, 3_600_000),
                s.integer("upstream-vocab-size", 0, 0, 16_777_216),
                s.string("upstream-bootstrap-host", ""),
                s.integer("upstream-bootstrap-port", 8998, 1, 65535),
                KvEventsSettings.read(s));
        if (!u.url.isBlank()) {
            u.uri();
        }
        return u;
    }

    /** The base URL, checked: http(s), a host, and no trailing slash. */
    public URI uri() {
        URI uri;
        try {
            uri = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("model.upstream-url is not a URL: " + url);
        }
        if (uri.getHost() == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
            throw new ConfigException("model.upstream-url must be http://host:port or https://host:port, got " + url);
        }
        return uri;
    }

    public boolean sglang() {
        return SGLANG.equals(protocol);
    }

    /** The SGLang bootstrap host the decode server is told to reach the prefill server at. */
    public String bootstrapHostOrUrlHost() {
        return bootstrapHost.isBlank() ? uri().getHost() : bootstrapHost;
    }

    public UpstreamSettings withUrl(String url) {
        return new UpstreamSettings(
                url, protocol, timeoutMs, pollMs, startTimeoutMs, vocabSize, bootstrapHost, bootstrapPort, kvEvents);
    }

    public UpstreamSettings withProtocol(String protocol) {
        if (!PROTOCOLS.contains(protocol)) {
            throw new ConfigException("upstream protocol must be one of " + PROTOCOLS + ", got '" + protocol + "'");
        }
        return new UpstreamSettings(
                url, protocol, timeoutMs, pollMs, startTimeoutMs, vocabSize, bootstrapHost, bootstrapPort, kvEvents);
    }

    public UpstreamSettings withTimeoutMs(long timeoutMs) {
        return new UpstreamSettings(
                url, protocol, timeoutMs, pollMs, startTimeoutMs, vocabSize, bootstrapHost, bootstrapPort, kvEvents);
    }

    public UpstreamSettings withKvEvents(KvEventsSettings kvEvents) {
        return new UpstreamSettings(
                url, protocol, timeoutMs, pollMs, startTimeoutMs, vocabSize, bootstrapHost, bootstrapPort, kvEvents);
    }
}
