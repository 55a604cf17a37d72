package dev.tandem.bench;

import dev.tandem.cluster.ClusterNode;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.ClusterTls;
import dev.tandem.config.TandemConfig;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.KvChunk;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The other JVM of {@code tandem bench kv} (started by it, not by hand): a cluster member that takes KV
 * chunks on {@link Addresses#BENCH_KV} the way a decode worker does — binary bodies, KV_CACHE headers,
 * an acknowledgement with the byte count on the last — and a loopback TCP server that counts what a
 * socket sends (an 8-byte length first) and answers with the count. Prints {@code READY <tcp port>}, and
 * exits when its standard input closes (its parent is gone). With {@code --cluster-tls-*} its event bus
 * speaks mutual TLS (the bench's "event bus (mTLS)" path).
 */
@Command(name = "kv-peer", hidden = true, description = "The receiving JVM of tandem bench kv.")
public final class KvPeerCommand implements Callable<Integer> {
    @Option(names = "--cluster-name", required = true)
    String clusterName;

    @Option(names = "--join", required = true)
    String join;

    /** With the key and CA: the cluster's mutual TLS (cluster.tls-*), as the bench's member of it has. */
    @Option(names = "--cluster-tls-cert")
    String clusterTlsCert;

    @Option(names = "--cluster-tls-key")
    String clusterTlsKey;

    @Option(names = "--cluster-tls-ca")
    String clusterTlsCa;

    @Override
    public Integer call() throws Exception {
        ClusterSettings cluster = new ClusterSettings(clusterName, "127.0.0.1", 0, List.of(join));
        if (clusterTlsCert != null) {
            cluster = cluster.withTls(new ClusterTls(clusterTlsCert, clusterTlsKey, clusterTlsCa));
        }
        ClusterNode node =
                ClusterNode.start(cluster, TandemConfig.defaults().router()).await();
        var vertx = node.vertx();
        Map<Long, Long> received = new HashMap<>();
        vertx.eventBus()
                .<Buffer>consumer(Addresses.BENCH_KV, m -> {
                    KvChunk chunk = KvChunk.fromMessage(m.headers(), m.body());
                    long bytes = received.merge(
                            chunk.requestId(), (long) chunk.payload().length(), Long::sum);
                    if (chunk.last()) {
                        received.remove(chunk.requestId());
                        m.reply(new JsonObject().put("bytes_received", bytes));
                    }
                })
                .completion()
                .await();
        NetServer server = vertx.createNetServer()
                .connectHandler(socket -> {
                    // Per transfer: the 8-byte length (it may arrive in pieces), then that many bytes.
                    Buffer[] header = {Buffer.buffer()};
                    long[] left = {-1};
                    socket.handler(data -> {
                        int at = 0;
                        while (at < data.length()) {
                            if (left[0] < 0) {
                                int take = Math.min(8 - header[0].length(), data.length() - at);
                                header[0].appendBuffer(data, at, take);
                                at += take;
                                if (header[0].length() == 8) {
                                    left[0] = header[0].getLong(0);
                                    if (left[0] <= 0) {
                                        socket.close(); // not a transfer's length: the stream is garbled
                                        return;
                                    }
                                }
                                continue;
                            }
                            int take = (int) Math.min(left[0], data.length() - at);
                            at += take;
                            left[0] -= take;
                            if (left[0] == 0) {
                                socket.write(Buffer.buffer().appendLong(header[0].getLong(0)));
                                header[0] = Buffer.buffer();
                                left[0] = -1;
                            }
                        }
                    });
                })
                .listen(0, "127.0.0.1")
                .await();
        System.out.println("READY " + server.actualPort());
        System.out.flush();
        while (System.in.read() >= 0) {
            // keep running until the parent closes our input
        }
        node.close().await();
        return 0;
    }
}
