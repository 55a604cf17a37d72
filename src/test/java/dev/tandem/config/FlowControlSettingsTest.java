package dev.tandem.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code flow-control} and the tenants of {@code http.api-keys}, from the file and from the environment. */
class FlowControlSettingsTest {

    @Test
    void defaults() {
        FlowControlSettings f = TandemConfig.defaults().flowControl();
        assertEquals("X-Tenant-Id", f.tenantHeader());
        assertEquals("default", f.defaultTenant());
        assertTrue(f.fairness());
        assertTrue(!f.tenantFromUser(), "user names end users: not a metric label unless asked");
        assertTrue(f.quotaFailOpen());
        assertEquals(30_000, f.queue().timeoutMs());
        assertEquals(25, f.queue().maxQueuedPrefillMs());
        assertEquals(TenantSettings.DEFAULT, f.tenant("anyone"));
    }

    @Test
    void tenantsAndKeysFromTheFile() {
        JsonObject json = new JsonObject()
                .put(
                        "http",
                        new JsonObject()
                                .put(
                                        "api-keys",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("key", "sk-team-a")
                                                        .put("tenant", "team-a")
                                                        .put("priority", 2)
                                                        .put("requests-per-minute", 600))
                                                .add("sk-plain")
                                                .add("sk-b:tenant=team-b")))
                .put(
                        "flow-control",
                        new JsonObject()
                                .put("default-priority", -1)
                                .put("quota-partition", "closed")
                                .put(
                                        "tenants",
                                        new JsonObject()
                                                .put("team-b", new JsonObject().put("tokens-per-minute", 90_000))));
        TandemConfig c = TandemConfig.fromJson(json);
        ApiKeySpec a = c.http().keys().get(0);
        assertEquals("team-a", a.tenant());
        assertEquals(new TenantSettings(2, 600, 0), a.settings());
        ApiKeySpec plain = c.http().keys().get(1);
        assertTrue(plain.tenant().matches("key-[0-9a-f]{8}"), "a key of its own: " + plain.tenant());
        assertNull(plain.settings(), "the configured tenant's settings apply");
        assertEquals("team-b", c.http().keys().get(2).tenant());
        assertEquals(new TenantSettings(-1, 0, 90_000), c.flowControl().tenant("team-b"));
        assertEquals(new TenantSettings(-1, 0, 0), c.flowControl().tenant("someone"), "the defaults");
        assertEquals(false, c.flowControl().quotaFailOpen());
        assertEquals(
                java.util.List.of("sk-team-a", "sk-plain", "sk-b"), c.http().apiKeys());
        assertTrue(!a.toString().contains("sk-team-a"), "a key never shows in logs");
    }

    @Test
    void keysWithTenantsFromTheEnvironment() {
        JsonObject json = EnvOverrides.apply(
                        new JsonObject(),
                        Map.of(
                                "TANDEM_HTTP_API_KEYS",
                                "sk-1:tenant=acme:priority=3:requests-per-minute=60:tokens-per-minute=5000,sk-2",
                                "TANDEM_FLOW_CONTROL_FAIRNESS",
                                "false",
                                "TANDEM_FLOW_CONTROL_QUEUE_TIMEOUT_MS",
                                "1500"))
                .json();
        TandemConfig c = TandemConfig.fromJson(json);
        assertEquals(new TenantSettings(3, 60, 5000), c.http().keys().get(0).settings());
        assertEquals("acme", c.http().keys().get(0).tenant());
        assertEquals("sk-2", c.http().keys().get(1).key());
        assertEquals(false, c.flowControl().fairness());
        assertEquals(1500, c.flowControl().queue().timeoutMs());
    }

    @Test
    void mistakesFailStartUpWithTheirName() {
        assertThrows(ConfigException.class, () -> read("http", "api-keys", new JsonArray().add("k:tenant")));
        assertThrows(
                ConfigException.class,
                () -> read("http", "api-keys", new JsonArray().add("k").add("k")));
        assertThrows(ConfigException.class, () -> read("http", "api-keys", new JsonArray().add("k:color=red")));
        assertThrows(ConfigException.class, () -> read("http", "api-keys", new JsonArray().add(" ")));
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> read("flow-control", "tenants", new JsonObject().put("t", new JsonObject().put("prio", 1))));
        assertTrue(e.getMessage().contains("flow-control.tenants.t.prio"), e.getMessage());
        assertThrows(ConfigException.class, () -> read("flow-control", "quota-partition", "ajar"));
        assertThrows(ConfigException.class, () -> read("flow-control", "queue-timeout-ms", 0));
    }

    private static TandemConfig read(String section, String key, Object value) {
        return TandemConfig.fromJson(new JsonObject().put(section, new JsonObject().put(key, value)));
    }
}
