package dev.tandem.config;

import io.vertx.core.json.JsonObject;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Environment variables over the configuration file: {@code TANDEM_<SECTION>_<KEY>}, upper case with
 * dashes as underscores — {@code TANDEM_HTTP_PORT} sets {@code http.port},
 * {@code TANDEM_ROUTER_MAX_IN_FLIGHT} sets {@code router.max-in-flight}. Values are strings; lists are
 * comma-separated ({@code TANDEM_CLUSTER_MEMBERS=10.0.0.1:5701,10.0.0.2:5701}). The scheduling
 * profiles (lists of mappings) are set in the file only. Only variables that start with a section
 * name are configuration ({@code TANDEM_JAR} is not); within a section an unknown key fails start-up
 * naming the variable. How containers are configured without rebuilding a ConfigMap.
 */
public final class EnvOverrides {
    static final String PREFIX = "TANDEM_";

    /**
     * Kubernetes injects {@code <SERVICE>_SERVICE_HOST}, {@code <SERVICE>_PORT=tcp://...} and
     * {@code <SERVICE>_PORT_<n>_TCP...} for every Service in the namespace; a Service named
     * {@code tandem-router} must not become configuration.
     */
    private static final java.util.regex.Pattern SERVICE_LINK =
            java.util.regex.Pattern.compile("_SERVICE_(HOST|PORT)(_\\w+)?$|_PORT_\\d+_(TCP|UDP|SCTP)(_\\w+)?$");

    private static boolean serviceLink(String name, String value) {
        return SERVICE_LINK.matcher(name).find()
                || name.endsWith("_PORT") && value.matches("(tcp|udp|sctp)://.*"); // <SERVICE>_PORT=tcp://ip:port
    }

    private EnvOverrides() {}

    /**
     * The file's configuration with every {@code TANDEM_*} variable applied, and which variable set
     * which key (for error messages).
     */
    public static Applied apply(JsonObject fileConfig, Map<String, String> env) {
        JsonObject json = fileConfig.copy();
        Map<String, String> origins = new TreeMap<>();
        for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
            String name = e.getKey();
            if (!name.startsWith(PREFIX) || serviceLink(name, e.getValue())) {
                continue;
            }
            String rest = name.substring(PREFIX.length()).toLowerCase(Locale.ROOT);
            String section = sectionOf(rest);
            if (section == null) {
                continue; // not a configuration variable (TANDEM_JAR, TANDEM_HOME, ...): other tools' business
            }
            String key = rest.substring(section.length() + 1).replace('_', '-');
            Object current = json.getValue(section);
            if (current != null && !(current instanceof JsonObject)) {
                throw new ConfigException("'" + section + "' must be a mapping");
            }
            JsonObject target = current == null ? new JsonObject() : (JsonObject) current;
            target.put(key, e.getValue());
            json.put(section, target);
            origins.put(section + "." + key, name);
        }
        return new Applied(json, origins);
    }

    /**
     * The section a lower-cased variable name (without the prefix) starts with, or null. The longest
     * wins: {@code worker_bridge_tcp_port} is {@code worker-bridge.tcp-port}, not {@code worker.bridge-tcp-port}.
     */
    private static String sectionOf(String rest) {
        String best = null;
        for (String section : TandemConfig.SECTIONS) {
            String prefix = section.replace('-', '_') + "_";
            if (rest.startsWith(prefix)
                    && rest.length() > prefix.length()
                    && (best == null || section.length() > best.length())) {
                best = section;
            }
        }
        return best;
    }

    /** The merged configuration, and the variable behind each key it set. */
    public record Applied(JsonObject json, Map<String, String> origins) {

        /** Parses the merged configuration; an error about a key set from the environment names the variable. */
        public TandemConfig parse() {
            try {
                return TandemConfig.fromJson(json);
            } catch (ConfigException e) {
                for (Map.Entry<String, String> o : origins.entrySet()) {
                    if (e.getMessage().contains("'" + o.getKey() + "'")) {
                        throw new ConfigException(
                                e.getMessage() + " (set by environment variable " + o.getValue() + ")");
                    }
                }
                throw e;
            }
        }
    }
}
