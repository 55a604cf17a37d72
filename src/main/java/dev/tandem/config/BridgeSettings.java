package dev.tandem.config;

/**
 * The client event-bus bridges every router runs (section {@code bridge}): programs that are not HTTP
 * clients submit and cancel requests over them and receive their tokens as event-bus messages.
 *
 * @param tcpPort       the TCP bridge's port; -1 = no TCP bridge, 0 = any free port
 * @param maxFrameBytes the largest frame a TCP client may send; a larger one is refused unread, like an
 *                      HTTP body over {@code http.max-body-bytes}
 * @param sockjs        the SockJS bridge at {@code /eventbus} on the HTTP port, for browsers (and the web
 *                      console's live cluster view); its frames are bounded by {@code http.max-body-bytes}
 */
public record BridgeSettings(String host, int tcpPort, int maxFrameBytes, boolean sockjs) {

  static BridgeSettings read(ConfigSection s) {
    BridgeSettings b = new BridgeSettings(
        s.string("host", "127.0.0.1"),
        s.integer("tcp-port", 7000, -1, 65535),
        s.integer("max-frame-bytes", 1 << 20, 1024, 1 << 30),
        s.bool("sockjs", true));
    s.rejectUnknownKeys();
    return b;
  }

  public boolean tcpEnabled() {
    return tcpPort >= 0;
  }

  public BridgeSettings withTcpPort(int port) {
    return new BridgeSettings(host, port, maxFrameBytes, sockjs);
  }

  public BridgeSettings withMaxFrameBytes(int bytes) {
    return new BridgeSettings(host, tcpPort, bytes, sockjs);
  }

  public BridgeSettings withSockjs(boolean enabled) {
    return new BridgeSettings(host, tcpPort, maxFrameBytes, enabled);
  }
}
