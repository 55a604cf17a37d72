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
 * @param alone            a cluster of one: no join at all, under a name no other process has (see
 *                         {@link #asClusterOfOne()}); never read from the file
 * @param tls              the event bus's mutual TLS and the registry's signatures; {@link ClusterTls#NONE} = off
 */
public record ClusterSettings(
        String name,
        String host,
        int port,
        List<String> members,
        String hazelcastConfig,
        long shutdownDrainMs,
        boolean alone,
        ClusterTls tls) {

    public ClusterSettings(String name, String host, int port, List<String> members) {
        this(name, host, port, members, "", 30_000);
    }

    public ClusterSettings(
            String name, String host, int port, List<String> members, String hazelcastConfig, long shutdownDrainMs) {
        this(name, host, port, members, hazelcastConfig, shutdownDrainMs, false, ClusterTls.NONE);
    }

    /** Whether nothing says whom to cluster with: no members to join and no Hazelcast file. */
    public boolean joinsNobody() {
        return members.isEmpty() && hazelcastConfig.isBlank();
    }

    /**
     * This member as a cluster of one: it joins nobody, and its name — the configured one plus a random
     * suffix — is one no other process shares, so nobody joins it either. What {@code tandem all} runs as
     * unless told whom to join: two embedded nodes on one host must never pair each other's workers.
     */
    public ClusterSettings asClusterOfOne() {
        String unique =
                name + "-alone-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        return new ClusterSettings(unique, host, port, members, hazelcastConfig, shutdownDrainMs, true, tls);
    }

    static ClusterSettings read(ConfigSection s) {
        ClusterSettings c = new ClusterSettings(
                s.string("name", "tandem"),
                s.string("host", "127.0.0.1"),
                s.integer("port", 5701, 1, 65535),
                List.copyOf(s.strings("members")),
                s.string("hazelcast-config", ""),
                s.integer("shutdown-drain-ms", 30_000L, 0, 3_600_000),
                false,
                ClusterTls.read(s));
        s.rejectUnknownKeys();
        return c;
    }

    public ClusterSettings withName(String name) {
        return new ClusterSettings(name, host, port, members, hazelcastConfig, shutdownDrainMs, alone, tls);
    }

    public ClusterSettings withMembers(List<String> members) {
        return new ClusterSettings(
                name, host, port, List.copyOf(members), hazelcastConfig, shutdownDrainMs, alone, tls);
    }

    public ClusterSettings withTls(ClusterTls tls) {
        return new ClusterSettings(name, host, port, members, hazelcastConfig, shutdownDrainMs, alone, tls);
    }

    public ClusterSettings withPort(int port) {
        return new ClusterSettings(name, host, port, members, hazelcastConfig, shutdownDrainMs, alone, tls);
    }
}
