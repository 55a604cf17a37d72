package dev.tandem.api;

import dev.tandem.config.ApiKeySpec;
import dev.tandem.config.FlowControlSettings;
import dev.tandem.config.TenantSettings;
import dev.tandem.router.RequestClass;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Who a request is from ({@link RequestClass}), the same for every transport: with API keys, the tenant of
 * the key it carries; without, the tenant header ({@code X-Tenant-Id}), else the body's {@code user}, else
 * the default tenant. Its deadline and TTFT target come from {@code X-Request-Timeout-Ms} and
 * {@code X-SLO-TTFT-Ms}.
 */
public final class Tenants {
    public static final String TIMEOUT_HEADER = "X-Request-Timeout-Ms";
    public static final String SLO_HEADER = "X-SLO-TTFT-Ms";
    /** A tenant name longer than this is refused: it becomes a metric label and a map key. */
    static final int MAX_NAME = 128;

    private final List<ApiKeySpec> keys;
    private final ApiKeys matcher;
    private final FlowControlSettings flow;

    public Tenants(List<ApiKeySpec> keys, FlowControlSettings flow) {
        this.keys = List.copyOf(keys);
        this.matcher = new ApiKeys(keys.stream().map(ApiKeySpec::key).toList());
        this.flow = flow;
    }

    /**
     * @param header a request header by name (null when absent)
     * @param user   the body's {@code user}, or null
     * @throws ApiException 400 for a malformed tenant, deadline or target
     */
    public RequestClass classify(UnaryOperator<String> header, String user) {
        String tenant;
        TenantSettings settings = null;
        if (!keys.isEmpty()) {
            int k = matcher.match(header.apply("Authorization"));
            ApiKeySpec key = k >= 0 ? keys.get(k) : null;
            tenant = key != null ? key.tenant() : flow.defaultTenant();
            settings = key != null ? key.settings() : null;
        } else {
            String named = header.apply(flow.tenantHeader());
            if (named != null) {
                tenant = checkName(named.trim());
            } else if (flow.tenantFromUser() && user != null && validName(user)) {
                tenant = user; // 'user' is free-form in OpenAI's API: one that cannot name a tenant is not an error
            } else {
                tenant = flow.defaultTenant();
            }
        }
        return new RequestClass(
                tenant,
                settings != null ? settings : flow.tenant(tenant),
                millis(header.apply(TIMEOUT_HEADER), TIMEOUT_HEADER),
                millis(header.apply(SLO_HEADER), SLO_HEADER));
    }

    private static boolean validName(String name) {
        return !name.isEmpty() && name.length() <= MAX_NAME && name.chars().allMatch(c -> c > 0x20 && c < 0x7f);
    }

    private String checkName(String name) {
        if (!validName(name)) {
            throw new ApiException(
                    400,
                    "invalid_request_error",
                    flow.tenantHeader(),
                    "invalid_tenant",
                    "the tenant (" + flow.tenantHeader() + " or 'user') must be 1 to " + MAX_NAME
                            + " printable ASCII characters without spaces");
        }
        return name;
    }

    /** A positive whole number of milliseconds up to a day, or 0 when the header is absent. */
    static long millis(String value, String name) {
        if (value == null) {
            return 0;
        }
        try {
            long ms = Long.parseLong(value.trim());
            if (ms >= 1 && ms <= 86_400_000L) {
                return ms;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new ApiException(
                400,
                "invalid_request_error",
                name,
                "invalid_header",
                "'" + name + "' must be a whole number of milliseconds from 1 to 86400000, got '" + value + "'");
    }
}
