package dev.tandem.bridge;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One client of the TCP bridge: reads its frames, checks them against {@link ClientPermissions},
 * forwards its sends to this router's event bus, and writes back replies and the messages of the
 * addresses it registered. A bad frame gets an {@code err} frame and harms nothing else; only a stream
 * that is not framed at all, or a client that stops reading what it is sent, loses its connection.
 * When the connection closes its registrations go, and {@link BridgeClients} ends its requests.
 */
final class TcpBridgeConnection implements BridgeFrameReader.Listener {
  private static final Logger LOG = Logger.getLogger(TcpBridgeConnection.class.getName());
  /** Addresses one connection may receive on; a client needs one. */
  static final int MAX_REGISTRATIONS = 16;
  /** Bytes written and not yet taken by the client after which it is cut off, not buffered for. */
  static final long MAX_UNREAD_BYTES = 16L << 20;
  private static final Set<String> TYPES = Set.of("send", "publish", "register", "unregister", "ping");

  private final NetSocket socket;
  private final EventBus eventBus;
  private final BridgeClients clients;
  private final int maxFrameBytes;
  private final long replyTimeoutMs;
  private final String id;
  private final Consumer<TcpBridgeConnection> onClosed;
  private final Map<String, MessageConsumer<Object>> consumers = new HashMap<>();
  private long unreadBytes;
  private boolean paused;
  private boolean closed;

  /**
   * @param replyTimeoutMs how long a send waits for its reply; longer than the router's request
   *                       timeout, so a request that fails before it starts is answered with its own error
   */
  TcpBridgeConnection(NetSocket socket, EventBus eventBus, BridgeClients clients, int maxFrameBytes,
                      long replyTimeoutMs, Consumer<TcpBridgeConnection> onClosed) {
    this.socket = socket;
    this.eventBus = eventBus;
    this.clients = clients;
    this.maxFrameBytes = maxFrameBytes;
    this.replyTimeoutMs = replyTimeoutMs;
    this.onClosed = onClosed;
    this.id = clients.open();
  }

  void start() {
    socket.handler(new BridgeFrameReader(maxFrameBytes, this));
    socket.drainHandler(v -> {
      if (paused) {
        paused = false;
        socket.resume();
      }
    });
    socket.closeHandler(v -> onClose());
    socket.exceptionHandler(e -> LOG.log(Level.FINE, "bridge connection " + id + " failed", e));
  }

  void close() {
    socket.close();
  }

  @Override
  public void onFrame(Buffer payload) {
    if (closed) {
      return;
    }
    try {
      dispatch(payload);
    } catch (RuntimeException e) {
      // A bug must cost this frame only, not the connection or the other clients.
      LOG.log(Level.WARNING, "bridge frame failed on connection " + id, e);
      write(BridgeFrames.err("internal_error", "internal error: " + e, null));
    }
  }

  @Override
  public void onOversized(long length) {
    write(BridgeFrames.err("frame_too_large", "a frame of " + length + " bytes is over the limit of " + maxFrameBytes
        + " bytes (bridge.max-frame-bytes); it was skipped", null));
  }

  @Override
  public void onUnframed(int length) {
    write(BridgeFrames.err("invalid_frame_length", "a frame length of " + length
        + " is not a frame: each frame is a 4-byte big-endian length then that many bytes of JSON; closing", null));
    socket.close();
  }

  private void dispatch(Buffer payload) {
    Object parsed;
    try {
      parsed = Json.decodeValue(payload);
    } catch (DecodeException e) {
      write(BridgeFrames.err("invalid_json", "the frame is not valid JSON: " + e.getMessage(), null));
      return;
    }
    if (!(parsed instanceof JsonObject frame)) {
      write(BridgeFrames.err("invalid_json", "a frame must be a JSON object", null));
      return;
    }
    // Read first: every refusal below is addressed to it, so a client waiting for that reply hears at once.
    Object reply = frame.getValue("replyAddress");
    String replyAddress = reply instanceof String s ? s : null;
    if (reply != null && replyAddress == null) {
      write(BridgeFrames.err("invalid_frame", "'replyAddress' must be a string", null));
      return;
    }
    Object type = frame.getValue("type");
    if (!(type instanceof String t) || !TYPES.contains(t)) {
      write(BridgeFrames.err(type == null ? "missing_type" : "unknown_type", "'type' must be one of "
          + "send, publish, register, unregister, ping; got " + Json.encode(type), replyAddress));
      return;
    }
    if (t.equals("ping")) {
      write(BridgeFrames.pong());
      return;
    }
    Object address = frame.getValue("address");
    if (!(address instanceof String a) || a.isEmpty()) {
      write(BridgeFrames.err("missing_address", "a '" + t + "' frame needs an 'address' string", replyAddress));
      return;
    }
    switch (t) {
      case "send" -> forward(true, a, frame.getValue("body"), replyAddress);
      case "publish" -> forward(false, a, frame.getValue("body"), replyAddress);
      case "register" -> register(a, replyAddress);
      default -> unregister(a, replyAddress);
    }
  }

  private void forward(boolean send, String address, Object body, String replyAddress) {
    if (!ClientPermissions.inbound(address)) {
      write(BridgeFrames.err("access_denied", "clients may send only to tandem.generate and tandem.cancel, not '"
          + address + "'", replyAddress));
      return;
    }
    if (body != null && !(body instanceof JsonObject)) {
      write(BridgeFrames.err("invalid_body", "'body' must be a JSON object", replyAddress));
      return;
    }
    // Local only: a client is served by the router it is connected to. Client headers are not
    // forwarded; the connection header is the bridge's word, never the client's.
    DeliveryOptions options = new DeliveryOptions().setLocalOnly(true)
        .addHeader(BridgeClients.CONNECTION_HEADER, id);
    if (!send) {
      eventBus.publish(address, body, options);
    } else if (replyAddress == null) {
      eventBus.send(address, body, options);
    } else {
      eventBus.request(address, body, options.setSendTimeout(replyTimeoutMs)).onComplete(ar -> write(ar.succeeded()
          ? BridgeFrames.message(replyAddress, ar.result().body(), ar.result().headers(), true)
          : BridgeFrames.failedReply(replyAddress, address, ar.cause())));
    }
  }

  private void register(String address, String replyAddress) {
    if (!ClientPermissions.outbound(address)) {
      write(BridgeFrames.err("access_denied", "clients may receive only on addresses under tandem.client., not '"
          + address + "'", replyAddress));
      return;
    }
    if (consumers.containsKey(address)) {
      return; // registering twice is harmless
    }
    if (consumers.size() >= MAX_REGISTRATIONS) {
      write(BridgeFrames.err("too_many_registrations", "a connection may register at most " + MAX_REGISTRATIONS
          + " addresses", replyAddress));
      return;
    }
    if (!clients.register(id, address)) {
      write(BridgeFrames.err("address_in_use", "another connection receives on '" + address
          + "': pick a fresh address (tandem.client.<uuid>)", replyAddress));
      return;
    }
    // Local: only this router sends to it (pushes are local-only), and nothing is written to the cluster.
    consumers.put(address, eventBus.localConsumer(address, this::deliver));
  }

  private void unregister(String address, String replyAddress) {
    MessageConsumer<Object> consumer = consumers.remove(address);
    if (consumer == null) {
      write(BridgeFrames.err("unknown_address", "this connection has not registered '" + address + "'", replyAddress));
      return;
    }
    consumer.unregister();
    clients.unregister(id, address);
  }

  private void deliver(Message<Object> m) {
    write(BridgeFrames.message(m.address(), m.body(), m.headers(), m.isSend()));
  }

  private void write(JsonObject frame) {
    if (closed) {
      return;
    }
    Buffer data = BridgeFrames.encode(frame);
    if (unreadBytes + data.length() > MAX_UNREAD_BYTES) {
      LOG.warning("bridge connection " + id + " closed: its client left " + unreadBytes + " bytes unread");
      socket.close();
      onClose();
      return;
    }
    unreadBytes += data.length();
    socket.write(data).onComplete(ar -> unreadBytes -= data.length());
    // Stop reading from a client that does not read: its refusals must not pile up here.
    if (!paused && socket.writeQueueFull()) {
      paused = true;
      socket.pause();
    }
  }

  private void onClose() {
    if (closed) {
      return;
    }
    closed = true;
    List<MessageConsumer<Object>> left = new ArrayList<>(consumers.values());
    consumers.clear();
    left.forEach(MessageConsumer::unregister);
    clients.close(id);
    onClosed.accept(this);
  }
}
