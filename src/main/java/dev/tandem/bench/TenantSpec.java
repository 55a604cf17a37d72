package dev.tandem.bench;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A tenant of {@code bench route --tenants}: its name (sent as {@code X-Tenant-Id}), its priority band and
 * its arrival rate in requests per second of trace time. SPEC is {@code NAME:priority=P:rate=R[,NAME:...]};
 * {@code priority} defaults to 0, {@code rate} is required.
 */
record TenantSpec(String name, int priority, double rate) {

    /** The tenants of a SPEC, in order; {@link IllegalArgumentException} with the reason when it is malformed. */
    static List<TenantSpec> parse(String spec) {
        List<TenantSpec> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (String entry : spec.split(",")) {
            String[] parts = entry.trim().split(":");
            String name = parts[0].trim();
            if (!name.matches("[A-Za-z0-9_.-]{1,64}")) {
                throw new IllegalArgumentException(
                        "tenant name '" + name + "' must be 1 to 64 letters, digits, '_', '.' or '-'");
            }
            if (!names.add(name)) {
                throw new IllegalArgumentException("tenant '" + name + "' is named twice");
            }
            int priority = 0;
            double rate = Double.NaN;
            for (int i = 1; i < parts.length; i++) {
                String[] kv = parts[i].split("=", 2);
                String value = kv.length == 2 ? kv[1].trim() : "";
                try {
                    switch (kv[0].trim()) {
                        case "priority" -> priority = Integer.parseInt(value);
                        case "rate" -> rate = Double.parseDouble(value);
                        default ->
                            throw new IllegalArgumentException(
                                    "tenant '" + name + "': unknown field '" + kv[0] + "' (priority, rate)");
                    }
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("tenant '" + name + "': '" + parts[i] + "' is not a number");
                }
            }
            if (!(rate > 0) || rate > 1e6) {
                throw new IllegalArgumentException(
                        "tenant '" + name + "' needs rate=R, R > 0 requests/s of trace time");
            }
            if (priority < -1000 || priority > 1000) {
                throw new IllegalArgumentException("tenant '" + name + "': priority must be -1000 to 1000");
            }
            out.add(new TenantSpec(name, priority, rate));
        }
        return List.copyOf(out);
    }
}
