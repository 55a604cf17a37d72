package dev.tandem.config;

import java.util.List;

/**
 * Hazelcast membership: the cluster name, the interface and port this member binds, and the members
 * to join (TCP-IP; never multicast).
 */
public record ClusterSettings(String name, String host, int port, List<String> members) {

  static ClusterSettings read(ConfigSection s) {
    ClusterSettings c = new ClusterSettings(
        s.string("name", "tandem"),
        s.string("host", "127.0.0.1"),
        s.integer("port", 5701, 1, 65535),
        List.copyOf(s.strings("members")));
    s.rejectUnknownKeys();
    return c;
  }

  public ClusterSettings withName(String name) {
    return new ClusterSettings(name, host, port, members);
  }

  public ClusterSettings withMembers(List<String> members) {
    return new ClusterSettings(name, host, port, List.copyOf(members));
  }

  public ClusterSettings withPort(int port) {
    return new ClusterSettings(name, host, port, members);
  }
}
