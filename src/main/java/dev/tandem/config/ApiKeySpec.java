package dev.tandem.config;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * One entry of {@code http.api-keys}: a key, the tenant it speaks for, and that tenant's priority and
 * quotas when the entry sets them (else {@code flow-control.tenants}' entry for the tenant, else the
 * defaults). In the file an entry is a key or a mapping ({@code {key, tenant, priority,
 * requests-per-minute, tokens-per-minute}}); in {@code TANDEM_HTTP_API_KEYS}, a comma-separated list of
 * {@code KEY[:tenant=T][:priority=P][:requests-per-minute=N][:tokens-per-minute=N]}.
 *
 * @param tenant   the key's tenant; a key without one is a tenant of its own, named {@code key-} and the
 *                 first 8 hex digits of its SHA-256 (so it shows in metrics without showing the key)
 * @param settings null when the entry sets none of them: the tenant's configured settings apply
 */
public record ApiKeySpec(String key, String tenant, TenantSettings settings) {

    @Override
    public String toString() {
        return "ApiKeySpec[tenant=" + tenant + "]"; // never the key itself, in logs or errors
    }

    static ApiKeySpec read(ConfigSection s) {
        String key = s.string("key", "").trim();
        if (key.isEmpty()) {
            throw new ConfigException("'" + s.key("key") + "' must not be empty");
        }
        String tenant = s.string("tenant", defaultTenant(key)).trim();
        boolean sets = s.has("priority") || s.has("requests-per-minute") || s.has("tokens-per-minute");
        TenantSettings settings = TenantSettings.read(s, TenantSettings.DEFAULT);
        s.rejectUnknownKeys();
        return new ApiKeySpec(key, tenant, sets ? settings : null);
    }

    /** {@code KEY:tenant=T:priority=P:...}, the environment's form, as the mapping it stands for. */
    static JsonObject parse(String entry) {
        String[] parts = entry.split(":");
        JsonObject json = new JsonObject().put("key", parts[0].trim());
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            if (eq <= 0) {
                throw new ConfigException("'http.api-keys' entry field '" + parts[i]
                        + "' must be name=value (tenant, priority, " + "requests-per-minute, tokens-per-minute)");
            }
            json.put(
                    parts[i].substring(0, eq).trim(), parts[i].substring(eq + 1).trim());
        }
        return json;
    }

    static String defaultTenant(String key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return "key-" + HexFormat.of().formatHex(d, 0, 4);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
