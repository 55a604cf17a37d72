package dev.tandem.config;

import java.util.List;

/**
 * The client event-bus bridges every router runs (section {@code bridge}): programs that are not HTTP
 * clients submit and cancel requests over them and receive their tokens as event-bus messages.
 *
 * @param tcpPort       the TCP bridge's port; -1 = no TCP bridge, 0 = any free port
 * @param maxFrameBytes the largest frame a TCP client may send; a larger one is refused unread, like an
 *                      HTTP body over {@code http.max-body-bytes}
 * @param sockjs        the SockJS bridge at {@code /eventbus} on the HTTP port, for browsers (and the web
 *                      console's live cluster view); its frames are bounded by {@code http.max-body-bytes}
 * @param sockjsAllowedOrigins web origins besides the router's own whose pages may use the SockJS bridge
 *                      ({@code "*"}: any — only behind API keys)
 * @param idleTimeoutMs a TCP connection that neither sends a frame (a ping will do) nor takes one for this long is
 *                      closed; 0 = never
 * @param frameReadTimeoutMs a TCP frame whose bytes (a skipped oversized one's included) take longer than this to
 *                      arrive closes the connection; 0 = never
 * @param tls           TLS of the TCP bridge (the SockJS bridge is on the HTTP port and has {@code http}'s)
 * @param connections   connection limits of the TCP bridge
 */
public record BridgeSettings(
        String host,
        int tcpPort,
        int maxFrameBytes,
        boolean sockjs,
        List<String> sockjsAllowedOrigins,
        long idleTimeoutMs,
        long frameReadTimeoutMs,
        TlsSettings tls,
        ConnectionLimits connections) {

    static BridgeSettings read(ConfigSection s) {
        BridgeSettings b = new BridgeSettings(
                s.string("host", "127.0.0.1"),
                s.integer("tcp-port", 7000, -1, 65535),
                s.integer("max-frame-bytes", 1 << 20, 1024, 1 << 30),
                s.bool("sockjs", true),
                List.copyOf(s.strings("sockjs-allowed-origins")),
                s.integer("idle-timeout-ms", 300_000L, 0, 86_400_000L),
                s.integer("frame-read-timeout-ms", 10_000L, 0, 3_600_000L),
                TlsSettings.read(s),
                ConnectionLimits.read(s, 4_096));
        s.rejectUnknownKeys();
        return b;
    }

    /** The defaults' timeouts with the other fields as given. */
    public BridgeSettings(
            String host, int tcpPort, int maxFrameBytes, boolean sockjs, List<String> sockjsAllowedOrigins) {
        this(
                host,
                tcpPort,
                maxFrameBytes,
                sockjs,
                sockjsAllowedOrigins,
                300_000L,
                10_000L,
                TlsSettings.NONE,
                ConnectionLimits.NONE);
    }

    public boolean tcpEnabled() {
        return tcpPort >= 0;
    }

    public BridgeSettings withTcpPort(int port) {
        return new BridgeSettings(
                host,
                port,
                maxFrameBytes,
                sockjs,
                sockjsAllowedOrigins,
                idleTimeoutMs,
                frameReadTimeoutMs,
                tls,
                connections);
    }

    public BridgeSettings withTls(TlsSettings tls) {
        return new BridgeSettings(
                host,
                tcpPort,
                maxFrameBytes,
                sockjs,
                sockjsAllowedOrigins,
                idleTimeoutMs,
                frameReadTimeoutMs,
                tls,
                connections);
    }

    public BridgeSettings withConnections(ConnectionLimits connections) {
        return new BridgeSettings(
                host,
                tcpPort,
                maxFrameBytes,
                sockjs,
                sockjsAllowedOrigins,
                idleTimeoutMs,
                frameReadTimeoutMs,
                tls,
                connections);
    }
}
