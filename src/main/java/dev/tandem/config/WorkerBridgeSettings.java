package dev.tandem.config;

/**
 * The worker bridge (section {@code worker-bridge}): a TCP event-bus bridge on router nodes through
 * which processes in other languages join as prefill or decode workers. Off by default: a worker may
 * send tokens to any router and receives prompts in plain text, so it is a trusted party and a join
 * must carry {@code token}.
 *
 * @param tcpPort        -1 = off, 0 = any free port
 * @param maxFrameBytes  the largest frame a worker may send (KV chunks travel base64 in frames)
 * @param token          the shared secret a join must carry; required whenever the bridge listens
 * @param replyTimeoutMs a message handed to a worker that is not answered within this time is failed
 * @param allowNoToken   development only: listen without a token, which is accepted on a loopback host alone
 * @param frameReadTimeoutMs a frame whose bytes take longer than this to arrive closes the connection
 * @param failedJoins    how many joins without the token a connection and a source address may make
 * @param tls            TLS of the bridge; with {@code tls-client-ca} a worker needs a certificate besides the token
 * @param connections    connection limits
 */
public record WorkerBridgeSettings(
        String host,
        int tcpPort,
        int maxFrameBytes,
        String token,
        long replyTimeoutMs,
        boolean allowNoToken,
        long frameReadTimeoutMs,
        FailedJoins failedJoins,
        TlsSettings tls,
        ConnectionLimits connections) {
    /** Shorter tokens are guessable; 16 characters is what {@code openssl rand -hex 8} prints. */
    public static final int MIN_TOKEN_CHARS = 16;

    /**
     * Limits on joins that carry no token or the wrong one, so the token cannot be guessed at line speed.
     *
     * @param perConnection a connection is closed at its this-many-th failed join
     * @param perAddress    this many failed joins from one source address within {@code windowMs} of its
     *                      first lock it out: its joins are refused unheard until the window closes
     * @param windowMs      how long an address's failures are remembered
     */
    public record FailedJoins(int perConnection, int perAddress, long windowMs) {
        static FailedJoins read(ConfigSection s) {
            return new FailedJoins(
                    s.integer("max-failed-joins-per-connection", 3, 1, 1000),
                    s.integer("max-failed-joins-per-address", 10, 1, 1_000_000),
                    s.integer("failed-join-window-ms", 60_000, 100, 86_400_000));
        }
    }

    static WorkerBridgeSettings read(ConfigSection s) {
        WorkerBridgeSettings b = new WorkerBridgeSettings(
                s.string("host", "127.0.0.1"),
                (int) s.integer("tcp-port", -1, -1, 65535),
                (int) s.integer("max-frame-bytes", 4 << 20, 1024, 1 << 30),
                s.string("token", ""),
                s.integer("reply-timeout-ms", 60_000, 100, 3_600_000),
                s.bool("allow-no-token", false),
                s.integer("frame-read-timeout-ms", 30_000, 100, 3_600_000),
                FailedJoins.read(s),
                TlsSettings.read(s),
                ConnectionLimits.read(s, 1_024));
        s.rejectUnknownKeys();
        if (!b.token.isEmpty() && b.token.length() < MIN_TOKEN_CHARS) {
            throw new ConfigException("'worker-bridge.token' must be at least " + MIN_TOKEN_CHARS + " characters");
        }
        return b;
    }

    public boolean enabled() {
        return tcpPort >= 0;
    }

    /**
     * Why this bridge must not listen as configured, or null: a listening bridge needs a token, unless
     * {@code allow-no-token} is set and it binds a loopback address (a developer's own machine).
     */
    public String refusal() {
        if (!enabled() || !token.isEmpty()) {
            return null;
        }
        if (!allowNoToken) {
            return "the worker bridge listens (worker-bridge.tcp-port " + tcpPort
                    + ") but worker-bridge.token is not set: any process that reaches it could join as a worker and"
                    + " read every prompt; set a token of at least " + MIN_TOKEN_CHARS
                    + " characters (TANDEM_WORKER_BRIDGE_TOKEN), or for development on loopback"
                    + " worker-bridge.allow-no-token: true";
        }
        if (!loopback(host)) {
            return "worker-bridge.allow-no-token is for development on a loopback host only, not on '" + host
                    + "': set worker-bridge.token";
        }
        return null;
    }

    /** A loopback literal; names other than localhost are not resolved (no DNS at start-up, nor trust in it). */
    static boolean loopback(String host) {
        String h = host.trim();
        return h.equals("localhost") || h.startsWith("127.") || h.equals("::1") || h.equals("[::1]");
    }

    public WorkerBridgeSettings withTcpPort(int port) {
        return new WorkerBridgeSettings(
                host,
                port,
                maxFrameBytes,
                token,
                replyTimeoutMs,
                allowNoToken,
                frameReadTimeoutMs,
                failedJoins,
                tls,
                connections);
    }

    public WorkerBridgeSettings withTls(TlsSettings tls) {
        return new WorkerBridgeSettings(
                host,
                tcpPort,
                maxFrameBytes,
                token,
                replyTimeoutMs,
                allowNoToken,
                frameReadTimeoutMs,
                failedJoins,
                tls,
                connections);
    }
}
