package dev.tandem.cluster;

import dev.tandem.config.ClusterSettings;
import dev.tandem.config.ClusterTls;
import dev.tandem.security.PemIdentity;
import dev.tandem.security.RegistrySeal;
import dev.tandem.security.SignedRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;

/**
 * What {@code cluster.tls-*} turns on: mutual TLS on the event bus (each member presents its certificate and
 * accepts only peers the cluster CA issued — a process without one can neither send nor receive a message)
 * and signed worker registry entries ({@link SignedRegistry}), since Hazelcast itself lets anyone in.
 */
final class ClusterTlsOptions {
    private ClusterTlsOptions() {}

    /** The event bus on the cluster's interface; with cluster TLS, mutual TLS on every member connection. */
    static EventBusOptions eventBus(ClusterSettings cluster) {
        EventBusOptions options = new EventBusOptions()
                .setHost(cluster.host())
                .setClusterPublicHost(cluster.host())
                .setPort(0);
        ClusterTls tls = cluster.tls();
        if (!tls.enabled()) {
            return options;
        }
        // Members are reached by address (pod IPs), so the certificate's CA is what is checked, not a host name:
        // Vert.x's event-bus client verifies no host name.
        options.setSsl(true)
                .setKeyCertOptions(
                        new PemKeyCertOptions().setCertPath(tls.cert()).setKeyPath(tls.key()))
                .setTrustOptions(new PemTrustOptions().addCertPath(tls.ca()))
                .setClientAuth(ClientAuth.REQUIRED);
        return options;
    }

    /** The registry's seal: signatures with this member's certificate key under cluster TLS, else none. */
    static RegistrySeal registrySeal(Vertx vertx, ClusterSettings cluster, HazelcastClusterManager manager) {
        ClusterTls tls = cluster.tls();
        if (!tls.enabled()) {
            return RegistrySeal.NONE;
        }
        try {
            PemIdentity self = PemIdentity.parse(vertx, read(tls.cert()), read(tls.key()));
            var hazelcast = manager.getHazelcastInstance();
            // Cluster time: members' clocks may differ, Hazelcast's agrees within its sync error.
            return new SignedRegistry(
                    self,
                    PemIdentity.authorities(vertx, read(tls.ca())),
                    () -> hazelcast.getCluster().getClusterTime());
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cluster.tls-cert/-key/-ca: " + e.getMessage(), e);
        }
    }

    private static Buffer read(String path) throws IOException {
        return Buffer.buffer(Files.readAllBytes(Path.of(path)));
    }
}
