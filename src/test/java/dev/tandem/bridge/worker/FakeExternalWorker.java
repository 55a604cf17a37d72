package dev.tandem.bridge.worker;

import dev.tandem.bridge.BridgeTestClient;
import dev.tandem.engine.Engine;
import dev.tandem.engine.KvCache;
import dev.tandem.engine.Sampler;
import dev.tandem.engine.StopCondition;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.KvAck;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.TokenBatch;
import dev.tandem.protocol.TokenEvent;
import dev.tandem.worker.engine.EngineSampling;
import dev.tandem.worker.kv.KvTransferAssembler;
import dev.tandem.worker.kv.KvTransferCodec;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.Base64;
import java.util.List;

/**
 * An external worker as a program in another language would be, driven step by step by a test over
 * a plain socket: joins over the worker bridge and serves with the Java engine's math, so its output
 * can be checked token for token — which proves the KV crossed the bridge intact.
 */
final class FakeExternalWorker implements AutoCloseable {
    final BridgeTestClient client;
    final Engine engine;
    String workerId;

    FakeExternalWorker(int port, Engine engine) throws IOException {
        this.client = BridgeTestClient.connect(port);
        this.engine = engine;
    }

    /** The worker-bridge.token of the tests' nodes: a listening worker bridge requires one. */
    static final String TOKEN = "test-join-token-7f3a9c";

    static JsonObject joinBody(String role, Engine engine, String workerId) {
        return new JsonObject()
                .put("token", TOKEN)
                .put("role", role)
                .put("model", engine.info().name())
                .put("model_fingerprint", engine.info().fingerprint())
                .put("max_batch", 8)
                .put("worker_id", workerId);
    }

    /** Joins and returns the welcome's body; fails the test when refused. */
    JsonObject join(String role, String id) throws IOException {
        JsonObject reply = client.request(Addresses.WORKER_JOIN, joinBody(role, engine, id));
        if (!"message".equals(reply.getString("type"))) {
            throw new AssertionError("join refused: " + reply.encode());
        }
        workerId = reply.getJsonObject("body").getString("worker_id");
        return reply.getJsonObject("body");
    }

    void heartbeat(int activeSequences, boolean draining) throws IOException {
        client.write(new JsonObject()
                .put("type", "send")
                .put("address", Addresses.WORKER_HEARTBEAT)
                .put(
                        "body",
                        new JsonObject()
                                .put("draining", draining)
                                .put(
                                        "load",
                                        new JsonObject()
                                                .put("queued_prefill_tokens", 0)
                                                .put("active_sequences", activeSequences)
                                                .put("kv_bytes_used", 0)
                                                .put("kv_bytes_capacity", 1 << 20))));
    }

    /** The next message the bridge hands this worker on {@code address}. */
    JsonObject awaitMessage(String address) {
        return client.await(
                f -> "message".equals(f.getString("type")) && address.equals(f.getString("address")),
                "a message on " + address);
    }

    void answer(JsonObject message, JsonObject body) throws IOException {
        client.write(new JsonObject()
                .put("type", "send")
                .put("address", message.getString("replyAddress"))
                .put("body", body));
    }

    void fail(JsonObject message, int code, String why) throws IOException {
        client.write(new JsonObject()
                .put("type", "send")
                .put("address", message.getString("replyAddress"))
                .put("failureCode", code)
                .put("message", why));
    }

    /** Decode role: takes one request's KV chunks (base64) and acknowledges them; returns the verified cache. */
    KvCache receiveKv() throws Exception {
        KvTransferAssembler assembler =
                new KvTransferAssembler(engine.kvLayout(), engine.info().fingerprint(), 1L << 30);
        while (true) {
            JsonObject chunk = awaitMessage(Addresses.decodeKv(workerId));
            assembler.accept(Buffer.buffer(Base64.getDecoder().decode(chunk.getString("body"))));
            JsonObject headers = chunk.getJsonObject("headers");
            if ("true".equals(headers.getString("tandem-last"))) {
                KvCache cache = assembler.finish();
                answer(
                        chunk,
                        KvAck.CODEC.encode(new KvAck(
                                Long.parseLong(headers.getString("tandem-request-id")),
                                assembler.bytesReceived(),
                                cache.length())));
                return cache;
            }
        }
    }

    /** Decode role: joins the request to its "batch" and streams every token to the router, one event per step. */
    void decode(KvCache cache) throws IOException {
        JsonObject start = awaitMessage(Addresses.decodeStart(workerId));
        DecodeRequest r = DecodeRequest.CODEC.decode(start.getJsonObject("body"));
        answer(start, new JsonObject().put("request_id", r.requestId()).put("joined", true));
        StopCondition stop = new StopCondition(
                engine.tokenizer(),
                r.stopTokens(),
                r.maxNewTokens(),
                cache.length(),
                engine.info().config().seqLen());
        int last = r.firstToken();
        for (int generated = 1; ; ) {
            float[] logits = engine.decodeStep(List.of(cache), new int[] {last})[0];
            int token = Sampler.sample(logits, EngineSampling.of(r.sampling()), cache.length());
            generated++;
            StopCondition.Outcome outcome = stop.check(token, generated);
            int[] tokens = outcome == StopCondition.Outcome.STOP ? new int[0] : new int[] {token};
            sendTokens(
                    r.routerId(),
                    new TokenEvent(
                            r.requestId(),
                            generated - 1,
                            tokens,
                            outcome.finished() ? outcome.finishReason() : null,
                            null));
            if (outcome.finished()) {
                return;
            }
            last = token;
        }
    }

    void sendTokens(String router, TokenEvent event) throws IOException {
        client.write(new JsonObject()
                .put("type", "send")
                .put("address", Addresses.routerTokens(router))
                .put("body", TokenBatch.CODEC.encode(new TokenBatch(workerId, List.of(event)))));
    }

    /** Prefill role: computes the prompt's KV, ships it in small base64 chunks, answers PREFILL_DONE. */
    void prefill(JsonObject message, int chunkBytes) throws IOException {
        PrefillRequest r = PrefillRequest.CODEC.decode(message.getJsonObject("body"));
        KvCache cache = engine.newCache();
        float[] logits = engine.prefill(cache, r.promptTokens(), () -> false);
        int first = Sampler.sample(logits, EngineSampling.of(r.sampling()), cache.length());
        List<Buffer> chunks = KvTransferCodec.encode(cache, engine.info().fingerprint(), chunkBytes);
        long total = 0;
        String address = Addresses.decodeKv(r.decodeWorkerId());
        for (int i = 0; i < chunks.size(); i++) {
            boolean lastChunk = i == chunks.size() - 1;
            total += chunks.get(i).length();
            JsonObject frame = new JsonObject()
                    .put("type", "send")
                    .put("address", address)
                    .put(
                            "headers",
                            new JsonObject()
                                    .put("tandem-request-id", Long.toString(r.requestId()))
                                    .put("tandem-chunk", Integer.toString(i))
                                    .put("tandem-last", Boolean.toString(lastChunk)))
                    .put(
                            "body",
                            Base64.getEncoder().encodeToString(chunks.get(i).getBytes()));
            if (!lastChunk) {
                client.write(frame);
                continue;
            }
            String ackAddress = "kv-ack-" + r.requestId();
            client.write(frame.put("replyAddress", ackAddress));
            JsonObject ack = client.await(f -> ackAddress.equals(f.getString("address")), "the KV ack");
            if (!"message".equals(ack.getString("type"))) {
                fail(message, ack.getInteger("failureCode", 502), "KV hand-over failed: " + ack.encode());
                return;
            }
        }
        answer(
                message,
                PrefillDone.CODEC.encode(new PrefillDone(r.requestId(), first, r.promptTokens().length, total, 1)));
    }

    @Override
    public void close() throws Exception {
        client.close();
    }
}
