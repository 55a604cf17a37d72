package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.tandem.config.TandemConfig;
import dev.tandem.config.TenantSettings;
import dev.tandem.router.RequestClass;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Who a request is from: by its key, else its tenant header, else its {@code user}, else the default. */
class TenantsTest {
    private static final JsonObject FLOW = new JsonObject()
            .put("tenant-from-user", true)
            .put("tenants", new JsonObject().put("gold", new JsonObject().put("priority", 7)));

    private static Tenants tenants(boolean keys) {
        JsonObject json = new JsonObject().put("flow-control", FLOW);
        if (keys) {
            json.put(
                    "http",
                    new JsonObject()
                            .put(
                                    "api-keys",
                                    new JsonArray()
                                            .add("sk-gold:tenant=gold")
                                            .add("sk-own:tenant=own:priority=2:requests-per-minute=9")));
        }
        TandemConfig c = TandemConfig.fromJson(json);
        return new Tenants(c.http().keys(), c.flowControl());
    }

    static Stream<Arguments> requests() {
        return Stream.of(
                Arguments.of(
                        "key: its tenant, settings from flow-control", true, "Bearer sk-gold", "x", "u", "gold", 7),
                Arguments.of("key: the entry's own settings", true, "Bearer sk-own", null, null, "own", 2),
                Arguments.of(
                        "key: the header cannot claim another tenant", true, "Bearer sk-own", "gold", null, "own", 2),
                Arguments.of("no keys: the header", false, null, "gold", "u", "gold", 7),
                Arguments.of("no keys, no header: user", false, null, null, "alice", "alice", 0),
                Arguments.of(
                        "a user that cannot name a tenant: the default",
                        false,
                        null,
                        null,
                        "Alice Smith",
                        "default",
                        0),
                Arguments.of("nothing: the default tenant", false, null, null, null, "default", 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("requests")
    void classifies(
            String name, boolean keys, String authorization, String header, String user, String tenant, int priority) {
        Map<String, String> headers = new HashMap<>();
        headers.put("Authorization", authorization);
        headers.put("X-Tenant-Id", header);
        RequestClass c = tenants(keys).classify(headers::get, user);
        assertEquals(tenant, c.tenant());
        assertEquals(priority, c.priority());
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("badHeaders")
    void malformedHeadersAre400(String header, String value) {
        Map<String, String> headers = Map.of(header, value);
        ApiException e = assertThrows(ApiException.class, () -> tenants(false).classify(headers::get, null));
        assertEquals(400, e.status());
        assertEquals(header, e.param());
    }

    static Stream<Arguments> badHeaders() {
        return Stream.of(
                Arguments.of("X-Request-Timeout-Ms", "soon"),
                Arguments.of("X-Request-Timeout-Ms", "0"),
                Arguments.of("X-SLO-TTFT-Ms", "-5"),
                Arguments.of("X-SLO-TTFT-Ms", "99999999999"),
                Arguments.of("X-Tenant-Id", "has space"),
                Arguments.of("X-Tenant-Id", "x".repeat(129)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("deadlines")
    void deadlineAndTargetFromHeaders(String timeout, String slo, long timeoutMs, long sloMs) {
        Map<String, String> headers = new HashMap<>();
        headers.put("X-Request-Timeout-Ms", timeout);
        headers.put("X-SLO-TTFT-Ms", slo);
        RequestClass c = tenants(false).classify(headers::get, null);
        assertEquals(timeoutMs, c.timeoutMs());
        assertEquals(sloMs, c.sloTtftMs());
        assertEquals(TenantSettings.DEFAULT, c.settings());
    }

    static Stream<Arguments> deadlines() {
        return Stream.of(
                Arguments.of(null, null, 0L, 0L),
                Arguments.of("1500", null, 1500L, 0L),
                Arguments.of(" 200 ", "80", 200L, 80L));
    }
}
