package dev.tandem.upstream;

import dev.tandem.bench.upstream.VllmKvEventReplay;
import dev.tandem.upstream.kvevents.MsgPack;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.msgpack.core.MessageBufferPacker;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * A GPU engine's KV event publisher as vLLM runs it: a PUB socket sending {@code [topic, 8-byte seq,
 * msgpack KVEventBatch]} and a ROUTER replaying its buffer from a requested sequence number, then seq -1.
 * Its prefix cache has its own hash scheme — SHA-256 bytes chained over the parent (vLLM's current one,
 * with {@link Encoding#MAP}) or signed 64-bit ints from Java's hash (older vLLM and SGLang, with
 * {@link Encoding#ARRAY}) — so Tandem must map them. On 127.0.0.1 only.
 */
final class FakeKvEventPublisher implements AutoCloseable {
    enum Encoding {
        /** msgspec {@code array_like=True}: {@code [ts, events, dp_rank]}, events {@code ["BlockStored", …]}. */
        ARRAY,
        /** msgspec maps with a {@code type} tag, and fields a newer vLLM adds. */
        MAP
    }

    private final Encoding encoding;
    private final int blockSize;
    private final ZContext ctx = new ZContext();
    private final ZMQ.Socket pub;
    private final ZMQ.Socket replay;
    final String endpoint;
    final String replayEndpoint;
    private final LinkedBlockingQueue<Runnable> work = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean running = true;

    /** Engine hash (as a key) → the hash value, for blocks the engine holds; its prefix → its key. */
    private final Map<String, Object> held = new LinkedHashMap<>();

    private final List<byte[]> buffer = new ArrayList<>();
    private long seq;
    private int withhold;
    /** Replay requests still to drop unanswered, as a request lost on its way would be. */
    private volatile int ignoreReplays;

    private volatile int replayRequests;

    FakeKvEventPublisher(Encoding encoding, int blockSize) {
        this.encoding = encoding;
        this.blockSize = blockSize;
        pub = ctx.createSocket(SocketType.PUB);
        endpoint = "tcp://127.0.0.1:" + pub.bindToRandomPort("tcp://127.0.0.1");
        replay = ctx.createSocket(SocketType.ROUTER);
        replayEndpoint = "tcp://127.0.0.1:" + replay.bindToRandomPort("tcp://127.0.0.1");
        thread = new Thread(this::run, "fake-kv-publisher");
        thread.setDaemon(true);
        thread.start();
    }

    /** The engine prefilled {@code prompt}: its full blocks it did not hold are stored, in one batch. */
    void prefill(int[] prompt) {
        work.add(() -> {
            List<Object> hashes = new ArrayList<>();
            Object parent = null;
            Object firstParent = null;
            int from = -1;
            for (int b = 0; (b + 1) * blockSize <= prompt.length; b++) {
                String key = key(prompt, (b + 1) * blockSize);
                Object hash = held.get(key);
                if (hash == null) {
                    hash = hash(parent, prompt, b);
                    held.put(key, hash);
                    if (from < 0) {
                        from = b;
                        firstParent = parent;
                    }
                    hashes.add(hash);
                }
                parent = hash;
            }
            if (from >= 0) {
                int[] tokens =
                        java.util.Arrays.copyOfRange(prompt, from * blockSize, (from + hashes.size()) * blockSize);
                send(List.of(stored(hashes, firstParent, tokens)));
            }
        });
    }

    /** The engine evicts every block it holds, in one batch. */
    void evictAll() {
        work.add(() -> {
            List<Object> hashes = new ArrayList<>(held.values());
            held.clear();
            send(List.of(removed(hashes)));
        });
    }

    /** The next {@code n} batches are numbered and kept for replay, but never published. */
    void withholdNext(int n) {
        work.add(() -> withhold = n);
    }

    /** Replay requests received so far, answered or not. */
    int replayRequests() {
        return replayRequests;
    }

    /** The next {@code n} replay requests get no answer. */
    void ignoreReplayRequests(int n) {
        ignoreReplays = n;
    }

    /** Waits until everything asked of the engine so far went out. */
    void flush() throws InterruptedException {
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        work.add(done::countDown);
        if (!done.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("the fake publisher is stuck");
        }
    }

    private Object hash(Object parent, int[] prompt, int b) {
        if (encoding == Encoding.ARRAY) {
            long h = parent == null ? 17 : (Long) parent;
            for (int i = b * blockSize; i < (b + 1) * blockSize; i++) {
                h = h * 31 + prompt[i];
            }
            return h * 0x9E3779B97F4A7C15L;
        }
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            if (parent != null) {
                sha.update((byte[]) parent);
            }
            ByteBuffer tokens = ByteBuffer.allocate(4 * blockSize);
            for (int i = b * blockSize; i < (b + 1) * blockSize; i++) {
                tokens.putInt(prompt[i]);
            }
            return sha.digest(tokens.array());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String key(int[] prompt, int length) {
        return java.util.Arrays.toString(java.util.Arrays.copyOf(prompt, length));
    }

    private byte[] stored(List<Object> hashes, Object parent, int[] tokens) {
        return MsgPack.pack(p -> {
            if (encoding == Encoding.ARRAY) {
                p.packArrayHeader(7).packString("BlockStored");
            } else {
                p.packMapHeader(12).packString("type").packString("BlockStored").packString("block_hashes");
            }
            packHashes(p, hashes);
            key(p, "parent_block_hash");
            packHash(p, parent);
            key(p, "token_ids");
            p.packArrayHeader(tokens.length);
            for (int t : tokens) {
                p.packInt(t);
            }
            key(p, "block_size");
            p.packInt(blockSize);
            key(p, "lora_id");
            p.packNil();
            key(p, "medium");
            p.packString("GPU");
            if (encoding == Encoding.MAP) {
                p.packString("lora_name").packNil();
                p.packString("extra_keys").packNil();
                p.packString("group_idx").packInt(0);
                p.packString("kv_cache_spec_kind").packString("full_attention");
                p.packString("a_field_from_the_future").packArrayHeader(1).packInt(1);
            }
        });
    }

    private byte[] removed(List<Object> hashes) {
        return MsgPack.pack(p -> {
            if (encoding == Encoding.ARRAY) {
                p.packArrayHeader(3).packString("BlockRemoved");
            } else {
                p.packMapHeader(4).packString("type").packString("BlockRemoved").packString("block_hashes");
            }
            packHashes(p, hashes);
            key(p, "medium");
            p.packString("GPU");
            if (encoding == Encoding.MAP) {
                p.packString("group_idx").packInt(0);
            }
        });
    }

    private void key(MessageBufferPacker p, String name) throws IOException {
        if (encoding == Encoding.MAP) {
            p.packString(name);
        }
    }

    private void packHashes(MessageBufferPacker p, List<Object> hashes) throws IOException {
        p.packArrayHeader(hashes.size());
        for (Object h : hashes) {
            packHash(p, h);
        }
    }

    private static void packHash(MessageBufferPacker p, Object h) throws IOException {
        if (h == null) {
            p.packNil();
        } else if (h instanceof Long l) {
            p.packLong(l);
        } else {
            byte[] bytes = (byte[]) h;
            p.packBinaryHeader(bytes.length).writePayload(bytes);
        }
    }

    /** One batch of already-encoded events. */
    private void send(List<byte[]> events) {
        byte[] payload = MsgPack.pack(p -> {
            double ts = System.currentTimeMillis() / 1000.0;
            if (encoding == Encoding.ARRAY) {
                p.packArrayHeader(3).packDouble(ts);
            } else {
                p.packMapHeader(3).packString("ts").packDouble(ts).packString("events");
            }
            p.packArrayHeader(events.size());
            for (byte[] e : events) {
                p.writePayload(e);
            }
            if (encoding == Encoding.MAP) {
                p.packString("data_parallel_rank");
            }
            p.packInt(0);
        });
        long n = seq++;
        buffer.add(payload);
        if (withhold > 0) {
            withhold--;
            return;
        }
        pub.sendMore(new byte[0]);
        pub.sendMore(ByteBuffer.allocate(8).putLong(n).array());
        pub.send(payload);
    }

    private void run() {
        while (running) {
            try {
                Runnable job = work.poll(20, TimeUnit.MILLISECONDS);
                if (job != null) {
                    job.run();
                }
                ZMsg request;
                while ((request = ZMsg.recvMsg(replay, ZMQ.DONTWAIT)) != null) {
                    serveReplay(request);
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (running) {
                    throw e;
                }
            }
        }
    }

    /** Answers as vLLM's replay endpoint, unless told to ignore this request. */
    private void serveReplay(ZMsg request) {
        replayRequests++;
        if (ignoreReplays > 0) {
            ignoreReplays--;
            return;
        }
        VllmKvEventReplay.answer(replay, request, 0, buffer);
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(2_000);
        ctx.close();
    }
}
