package dev.tandem.config;

/**
 * The worker bridge (section {@code worker-bridge}): a TCP event-bus bridge on router nodes through
 * which processes in other languages join as prefill or decode workers. Off by default: a worker may
 * send tokens to any router, so it is a trusted party.
 *
 * @param tcpPort        -1 = off, 0 = any free port
 * @param maxFrameBytes  the largest frame a worker may send (KV chunks travel base64 in frames)
 * @param token          when not empty, a join must carry it
 * @param replyTimeoutMs a message handed to a worker that is not answered within this time is failed
 */
public record WorkerBridgeSettings(String host, int tcpPort, int maxFrameBytes, String token, long replyTimeoutMs) {

    static WorkerBridgeSettings read(ConfigSection s) {
        WorkerBridgeSettings b = new WorkerBridgeSettings(
                s.string("host", "127.0.0.1"),
                (int) s.integer("tcp-port", -1, -1, 65535),
                (int) s.integer("max-frame-bytes", 4 << 20, 1024, 1 << 30),
                s.string("token", ""),
                s.integer("reply-timeout-ms", 60_000, 100, 3_600_000));
        s.rejectUnknownKeys();
        return b;
    }

    public boolean enabled() {
        return tcpPort >= 0;
    }

    public WorkerBridgeSettings withTcpPort(int port) {
        return new WorkerBridgeSettings(host, port, maxFrameBytes, token, replyTimeoutMs);
    }
}
