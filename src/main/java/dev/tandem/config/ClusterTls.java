package dev.tandem.config;

/**
 * The cluster's mutual TLS ({@code cluster.tls-cert}, {@code cluster.tls-key}, {@code cluster.tls-ca}, each
 * also {@code TANDEM_CLUSTER_TLS_<KEY>}): with them the event bus speaks TLS between members, each member
 * presents its certificate and accepts only peers whose certificates the CA issued, and registry entries
 * are signed with the certificate's key and must verify. PEM file paths.
 */
public record ClusterTls(String cert, String key, String ca) {
    public static final ClusterTls NONE = new ClusterTls("", "", "");

    static ClusterTls read(ConfigSection s) {
        ClusterTls t = new ClusterTls(
                s.string("tls-cert", "").trim(),
                s.string("tls-key", "").trim(),
                s.string("tls-ca", "").trim());
        int set = (t.cert.isEmpty() ? 0 : 1) + (t.key.isEmpty() ? 0 : 1) + (t.ca.isEmpty() ? 0 : 1);
        if (set != 0 && set != 3) {
            throw new ConfigException("'cluster.tls-cert', 'cluster.tls-key' and 'cluster.tls-ca' go together: a"
                    + " member needs its certificate, its key and the CA its peers' certificates come from");
        }
        for (String[] file : new String[][] {{"tls-cert", t.cert}, {"tls-key", t.key}, {"tls-ca", t.ca}}) {
            if (!file[1].isEmpty() && !java.nio.file.Files.isReadable(java.nio.file.Path.of(file[1]))) {
                throw new ConfigException(
                        "'" + s.key(file[0]) + "' names " + file[1] + ", which is not a readable file");
            }
        }
        return t;
    }

    public boolean enabled() {
        return !cert.isEmpty();
    }
}
