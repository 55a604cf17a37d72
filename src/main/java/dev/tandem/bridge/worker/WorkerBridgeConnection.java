package dev.tandem.bridge.worker;

import dev.tandem.bridge.BridgeFrames;
import dev.tandem.bridge.BridgeSocket;
import dev.tandem.cluster.WorkerAnnouncer;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.KvAck;
import dev.tandem.protocol.KvChunk;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.TokenBatch;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.protocol.WorkerHeartbeat;
import dev.tandem.protocol.WorkerJoin;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerWelcome;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetSocket;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One external worker's connection to the worker bridge. Its first send must be a {@link WorkerJoin}; then the bridge
 * receives on the worker's addresses in its name and hands it every message (KV as base64); the worker may send what
 * its role sends (KV and cancels; token batches under its own id), answers, heartbeats and cache events
 * ({@link BridgeKvEvents}). Everything else is refused with an {@code err} frame.
 */
final class WorkerBridgeConnection implements BridgeSocket.Handler {
    private static final Logger LOG = Logger.getLogger(WorkerBridgeConnection.class.getName());

    /** Sends with a reply address one worker may have outstanding: its KV hand-overs, in practice. */
    static final int MAX_AWAITING_REPLIES = 1024;

    private final WorkerBridge bridge;
    private final EventBus eventBus;
    private final BridgeSocket socket;
    /** The peer's IP address: failed joins are limited per source address. */
    private final String peerHost;

    private ExternalWorker worker;
    private PendingReplies pending;
    private BridgeKvEvents kvEvents;
    private boolean joining;
    private int awaitingReplies;
    private int failedJoins;
    private boolean closed;

    WorkerBridgeConnection(WorkerBridge bridge, NetSocket netSocket) {
        this.bridge = bridge;
        this.eventBus = bridge.vertx().eventBus();
        this.socket =
                new BridgeSocket(netSocket, bridge.settings().maxFrameBytes(), "worker-" + UUID.randomUUID(), this);
        this.peerHost = JoinGuard.host(netSocket.remoteAddress());
    }

    void start() {
        socket.start();
    }

    BridgeSocket socket() {
        return socket;
    }

    /** The worker's id once joined, else null. */
    String workerId() {
        return worker == null ? null : worker.id();
    }

    void close(String code, String detail) {
        socket.write(BridgeFrames.err(code, detail, null));
        socket.close();
    }

    /** Withdraws the joined worker from the registry (the socket may still be open); done when it is out. */
    Future<Void> leave() {
        return worker == null ? Future.succeededFuture() : worker.leave();
    }

    /** Tells the worker a router's member left, so it drops that router's work. */
    void routerNodeLeft(String nodeId) {
        if (worker != null) {
            socket.write(BridgeFrames.message(
                    Addresses.WORKER_ROUTER_LEFT, new JsonObject().put("node", nodeId), null, false));
        }
    }

    @Override
    public void onFrame(String type, String address, JsonObject frame, String replyAddress) {
        if (!type.equals("send")) {
            String detail =
                    "the worker bridge takes 'send' and 'ping' frames; it registers the worker's addresses at join";
            refuse("unsupported_type", detail, replyAddress);
            return;
        }
        Object body = frame.getValue("body");
        if (address.equals(Addresses.WORKER_JOIN)) {
            join(body, replyAddress);
        } else if (worker == null) {
            refuse("not_joined", "send a join to " + Addresses.WORKER_JOIN + " first", replyAddress);
        } else if (address.equals(Addresses.WORKER_HEARTBEAT)) {
            heartbeat(body, replyAddress);
        } else if (address.equals(Addresses.WORKER_KV_EVENTS)) {
            kvEvents.onFrame(body, replyAddress);
        } else if (address.startsWith(Addresses.BRIDGE_REPLY_PREFIX)) {
            answer(address, frame, replyAddress);
        } else if (worker.role() == WorkerRole.PREFILL && Addresses.decodeKvWorker(address) != null) {
            sendKv(address, body, frame.getValue("headers"), replyAddress);
        } else if (worker.role() == WorkerRole.PREFILL && Addresses.decodeCancelWorker(address) != null) {
            sendChecked(address, body, CancelRequest.CODEC, replyAddress);
        } else if (worker.role() == WorkerRole.DECODE && Addresses.routerOfTokens(address) != null) {
            sendTokens(address, body, replyAddress);
        } else {
            refuse(
                    "access_denied",
                    "a " + worker.role().wireName() + " worker may not send to '" + address + "'",
                    replyAddress);
        }
    }

    private void join(Object body, String replyAddress) {
        if (worker != null || joining) {
            refuse("already_joined", "this connection has joined already", replyAddress);
            return;
        }
        // Before anything is read: a locked-out address learns nothing, not even whether its join was well-formed.
        JsonObject lockout = bridge.joinGuard().lockout(peerHost, replyAddress);
        if (lockout != null) {
            bridge.refused(lockout.getString("message"));
            socket.write(lockout);
            socket.close();
            return;
        }
        WorkerJoin join;
        try {
            join = WorkerJoin.CODEC.decode(JsonCodec.object(body));
        } catch (ProtocolException e) {
            refuse("invalid_join", e.getMessage(), replyAddress);
            return;
        }
        if (!bridge.tokenAccepted(join.token())) {
            refuse("unauthorized", JoinGuard.unauthorized(join.token()), replyAddress);
            if (bridge.joinGuard().failed(peerHost, join.token() == null, ++failedJoins)) {
                socket.close();
            }
            return;
        }
        WorkerWelcome.ModelSpec model = bridge.model(join.model());
        if (model == null) {
            refuse(
                    "model_mismatch",
                    "this router knows no model '" + join.model() + "' to tokenize for (serving " + bridge.modelNames()
                            + "); start it with --model, or a Tandem worker of that model",
                    replyAddress);
            return;
        }
        String id = join.workerId() != null
                ? join.workerId()
                : "ext-" + join.role().wireName() + "-"
                        + UUID.randomUUID().toString().substring(0, 8);
        if (!bridge.claimId(id)) {
            refuse("worker_id_in_use", "a worker named '" + id + "' is connected here already", replyAddress);
            return;
        }
        joining = true;
        ExternalWorker w = new ExternalWorker(id, join, bridge.nodeId(), bridge.announcer());
        // Claimed in the registry itself, atomically: two bridges on two nodes cannot both admit one id.
        w.claim().onComplete(ar -> {
            joining = false;
            boolean claimed = ar.succeeded() && ar.result();
            if (closed || !claimed) {
                (claimed ? w.leave() : Future.<Void>succeededFuture()).onComplete(v -> bridge.releaseId(id));
                if (!closed) {
                    refuse(
                            ar.failed() ? "internal_error" : "worker_id_in_use",
                            ar.failed()
                                    ? "the registry cannot be written: "
                                            + ar.cause().getMessage()
                                    : "a worker named '" + id + "' is in the cluster's registry already",
                            replyAddress);
                }
                return;
            }
            admit(w, join, model, replyAddress);
        });
    }

    private void admit(ExternalWorker w, WorkerJoin join, WorkerWelcome.ModelSpec model, String replyAddress) {
        String id = w.id();
        pending = new PendingReplies(bridge.vertx(), bridge.settings().replyTimeoutMs(), "external worker " + id);
        for (String address : ExternalWorker.addresses(join.role(), id)) {
            w.addConsumer(eventBus.consumer(address, this::deliver));
        }
        kvEvents = BridgeKvEvents.attach(w, join, eventBus, socket, this::refuse);
        worker = w;
        joining = false;
        w.announce().onComplete(ar -> {
            if (closed) {
                return; // onClosed already withdrew it
            }
            if (ar.failed() && ar.cause() instanceof WorkerAnnouncer.ModelConflictException) {
                refuse("model_conflict", ar.cause().getMessage(), replyAddress);
                socket.close();
                return;
            }
            if (ar.failed()) {
                refuse(
                        "internal_error",
                        "the worker could not be registered: " + ar.cause().getMessage(),
                        replyAddress);
                socket.close();
                return;
            }
            LOG.info(() -> "external " + join.role().wireName() + " worker " + id + " joined over the worker bridge");
            WorkerWelcome welcome = new WorkerWelcome(
                    id,
                    bridge.nodeId(),
                    bridge.heartbeatMs(),
                    bridge.idleTimeoutMs(),
                    model,
                    ExternalWorker.addresses(join.role(), id));
            if (replyAddress != null) {
                socket.write(BridgeFrames.message(replyAddress, WorkerWelcome.CODEC.encode(welcome), null, true));
            }
        });
    }

    private void heartbeat(Object body, String replyAddress) {
        try {
            worker.heartbeat(WorkerHeartbeat.CODEC.decode(JsonCodec.object(body)));
        } catch (ProtocolException e) {
            refuse("invalid_heartbeat", e.getMessage(), replyAddress);
        }
    }

    /** A message for the worker: JSON as it is, binary (KV chunks) as base64; answers come back via {@link #answer}. */
    private void deliver(Message<Object> m) {
        if (closed) {
            // Queued before the consumers went: the worker is gone, and the sender should hear so now.
            if (m.replyAddress() != null) {
                m.fail(WorkerFailure.GONE.code(), "external worker " + worker.id() + " disconnected");
            }
            return;
        }
        Object body = m.body() instanceof Buffer b ? Base64.getEncoder().encodeToString(b.getBytes()) : m.body();
        JsonObject frame = BridgeFrames.message(m.address(), body, m.headers(), m.isSend());
        boolean cancel = m.address().equals(Addresses.decodeCancel(worker.id()))
                || m.address().equals(Addresses.prefillCancel(worker.id()));
        if (m.replyAddress() != null && !cancel) {
            frame.put("replyAddress", pending.hold(m, replyShape(m.address())));
        }
        socket.write(frame);
        if (cancel && m.replyAddress() != null) {
            // Confirmed by the bridge: the worker reads its socket in order, so the cancel reaches it before
            // anything the router sends after this confirmation. Workers never have to answer cancels.
            m.reply(new JsonObject().put("cancelled", true));
        }
    }

    /** What a good answer to a message on {@code address} looks like; null: any JSON object. */
    private JsonCodec<?> replyShape(String address) {
        String id = worker.id();
        if (address.equals(Addresses.prefill(id))) {
            return PrefillDone.CODEC;
        }
        if (address.equals(Addresses.decodeKv(id))) {
            return KvAck.CODEC;
        }
        if (address.equals(Addresses.workerStatus(id)) || address.equals(Addresses.workerDrain(id))) {
            return WorkerDescriptor.CODEC;
        }
        return null;
    }

    private void answer(String address, JsonObject frame, String replyAddress) {
        PendingReplies.Refusal refusal = pending.answer(address, frame);
        if (refusal != null) {
            refuse(refusal.code(), refusal.detail(), replyAddress);
        }
    }

    private void sendKv(String address, Object body, Object headers, String replyAddress) {
        if (!(body instanceof String text)) {
            refuse("invalid_body", "a KV chunk's body must be a base64 string", replyAddress);
            return;
        }
        if (!(headers instanceof JsonObject h)) {
            refuse(
                    "invalid_headers",
                    "a KV chunk needs 'headers' with tandem-request-id, tandem-chunk and tandem-last",
                    replyAddress);
            return;
        }
        KvChunk chunk;
        try {
            MultiMap map = MultiMap.caseInsensitiveMultiMap();
            for (Map.Entry<String, Object> e : h) {
                map.add(e.getKey(), String.valueOf(e.getValue()));
            }
            chunk = KvChunk.fromMessage(map, Buffer.buffer(Base64.getDecoder().decode(text)));
        } catch (IllegalArgumentException e) {
            refuse("invalid_body", "a KV chunk's body is not base64: " + e.getMessage(), replyAddress);
            return;
        } catch (ProtocolException e) {
            refuse("invalid_headers", e.getMessage(), replyAddress);
            return;
        }
        forward(address, chunk.payload(), chunk.deliveryOptions(), replyAddress, bridge.kvReplyTimeoutMs());
    }

    private void sendTokens(String address, Object body, String replyAddress) {
        TokenBatch batch;
        try {
            batch = TokenBatch.CODEC.decode(JsonCodec.object(body));
        } catch (ProtocolException e) {
            refuse("invalid_body", e.getMessage(), replyAddress);
            return;
        }
        if (!batch.workerId().equals(worker.id())) {
            refuse(
                    "access_denied",
                    "a worker sends tokens under its own id '" + worker.id() + "', not '" + batch.workerId() + "'",
                    replyAddress);
            return;
        }
        // Routers never answer token batches: a reply address would only hold a reply handler for nothing.
        eventBus.send(address, body);
        if (replyAddress != null) {
            socket.write(BridgeFrames.message(replyAddress, new JsonObject().put("sent", true), null, true));
        }
    }

    private void sendChecked(String address, Object body, JsonCodec<?> shape, String replyAddress) {
        try {
            shape.decode(JsonCodec.object(body));
        } catch (ProtocolException e) {
            refuse("invalid_body", e.getMessage(), replyAddress);
            return;
        }
        forward(
                address,
                body,
                new DeliveryOptions(),
                replyAddress,
                bridge.settings().replyTimeoutMs());
    }

    /** Sends on the worker's behalf; with a reply address, its answer (or failure) comes back as a frame. */
    private void forward(String address, Object body, DeliveryOptions options, String replyAddress, long timeoutMs) {
        if (replyAddress == null) {
            eventBus.send(address, body, options);
            return;
        }
        if (awaitingReplies >= MAX_AWAITING_REPLIES) {
            refuse(
                    "too_many_requests",
                    MAX_AWAITING_REPLIES + " sends of this connection await their replies",
                    replyAddress);
            return;
        }
        awaitingReplies++;
        eventBus.request(address, body, options.setSendTimeout(timeoutMs)).onComplete(ar -> {
            awaitingReplies--;
            socket.write(BridgeFrames.replyTo(replyAddress, address, ar));
        });
    }

    private void refuse(String code, String detail, String replyAddress) {
        bridge.refused(code);
        socket.write(BridgeFrames.err(code, detail, replyAddress));
    }

    @Override
    public void onClosed() {
        closed = true;
        bridge.connectionClosed(this);
        if (worker != null) {
            String id = worker.id();
            pending.failAll("external worker " + id + " disconnected");
            worker.leave().onComplete(ar -> {
                bridge.releaseId(id);
                if (ar.failed()) {
                    LOG.log(Level.WARNING, "external worker " + id + " could not be withdrawn cleanly", ar.cause());
                }
            });
            LOG.info(() -> "external worker " + id + " left the worker bridge");
        }
    }
}
