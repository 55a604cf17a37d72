package dev.tandem.config;

import java.util.List;

/**
 * Hazelcast membership: the cluster name, the interface and port this member binds, and the members
 * to join (TCP-IP; never multicast) — or a Hazelcast XML file whose network and join settings replace
 * those (e.g. Kubernetes discovery).
 *
 * @param hazelcastConfig path of a Hazelcast member XML; empty = the built-in loopback-safe TCP-IP join
 * @param shutdownDrainMs  on SIGTERM, how long a node lets running requests finish (routers refuse new
 *                         ones, workers drain) before it leaves the cluster
 */
public record ClusterSettings(
        String name, String host, int port, List<String> members, String hazelcastConfig, long shutdownDrainMs) {

    public ClusterSettings(String name, String host, int port, List<String> members) {
        this(name, host, port, members, "", 30_000);
    }

    static ClusterSettings read(ConfigSection s) {
        ClusterSettings c = new ClusterSettings(
                s.string("name", "tandem"),
                s.string("host", "127.0.0.1"),
                s.integer("port", 5701, 1, 65535),
                List.copyOf(s.strings("members")),
                s.string("hazelcast-config", ""),
                s.integer("shutdown-drain-ms", 30_000L, 0, 3_600_000));
        s.rejectUnknownKeys();
        return c;
    }

    public ClusterSettings withName(String name) {
        return new ClusterSettings(name, host, port, members, hazelcastConfig, shutdownDrainMs);
    }

    public ClusterSettings withMembers(List<String> members) {
        return new ClusterSettings(name, host, port, List.copyOf(members), hazelcastConfig, shutdownDrainMs);
    }

    public ClusterSettings withPort(int port) {
        return new ClusterSettings(name, host, port, members, hazelcastConfig, shutdownDrainMs);
    }

    public ClusterSettings withHazelcastConfig(String path) {
        return new ClusterSettings(name, host, port, members, path, shutdownDrainMs);
    }
}
