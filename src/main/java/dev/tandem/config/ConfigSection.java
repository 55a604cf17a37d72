package dev.tandem.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Typed reads from one section of the configuration. Every read remembers its key, and
 * {@link #rejectUnknownKeys()} fails on anything no one read — a typo must not pass silently.
 */
final class ConfigSection {
    private final String path;
    private final JsonObject json;
    private final Set<String> read = new HashSet<>();

    ConfigSection(String path, JsonObject json) {
        this.path = path;
        this.json = json == null ? new JsonObject() : json;
    }

    /** The full key of {@code name} in this section, as error messages name it. */
    String key(String name) {
        return path.isEmpty() ? name : path + "." + name;
    }

    ConfigSection section(String name) {
        read.add(name);
        Object v = json.getValue(name);
        if (v != null && !(v instanceof JsonObject)) {
            throw new ConfigException("'" + key(name) + "' must be a mapping");
        }
        return new ConfigSection(key(name), (JsonObject) v);
    }

    String string(String name, String dflt) {
        read.add(name);
        Object v = json.getValue(name);
        if (v == null) {
            return dflt;
        }
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Number || v instanceof Boolean) {
            return v.toString();
        }
        throw new ConfigException("'" + key(name) + "' must be a string");
    }

    long integer(String name, long dflt, long min, long max) {
        read.add(name);
        Object v = json.getValue(name);
        long value;
        if (v == null) {
            value = dflt;
        } else if (v instanceof Number n && n.doubleValue() == n.longValue()) {
            value = n.longValue();
        } else if (v instanceof String s) {
            try {
                value = Long.parseLong(s.trim());
            } catch (NumberFormatException e) {
                throw new ConfigException("'" + key(name) + "' must be an integer, got '" + s + "'");
            }
        } else {
            throw new ConfigException("'" + key(name) + "' must be an integer");
        }
        if (value < min || value > max) {
            throw new ConfigException("'" + key(name) + "' must be between " + min + " and " + max + ", got " + value);
        }
        return value;
    }

    /**
     * A byte count, or {@code auto} (the default): {@link #AUTO}, for whoever computes the value at start-up
     * (a worker's share of the memory budget).
     */
    long bytesOrAuto(String name, long min, long max) {
        Object v = json.getValue(name);
        if (v == null || v instanceof String s && s.trim().equalsIgnoreCase("auto")) {
            read.add(name);
            return AUTO;
        }
        try {
            return integer(name, AUTO, min, max);
        } catch (ConfigException e) {
            throw new ConfigException(e.getMessage() + " (or auto: a share of the memory budget)");
        }
    }

    /** What {@link #bytesOrAuto} reads for {@code auto}. */
    static final long AUTO = -1;

    /** A boolean; from the environment it arrives as the string "true" or "false". */
    boolean bool(String name, boolean dflt) {
        read.add(name);
        Object v = json.getValue(name);
        if (v == null) {
            return dflt;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        if (v instanceof String s
                && (s.trim().equalsIgnoreCase("true") || s.trim().equalsIgnoreCase("false"))) {
            return Boolean.parseBoolean(s.trim());
        }
        throw new ConfigException("'" + key(name) + "' must be true or false, got " + v);
    }

    /** A number with a fraction (or without); from the environment it arrives as a string. */
    double decimal(String name, double dflt, double min, double max) {
        read.add(name);
        Object v = json.getValue(name);
        double value;
        if (v == null) {
            value = dflt;
        } else if (v instanceof Number n) {
            value = n.doubleValue();
        } else if (v instanceof String s) {
            try {
                value = Double.parseDouble(s.trim());
            } catch (NumberFormatException e) {
                throw new ConfigException("'" + key(name) + "' must be a number, got '" + s + "'");
            }
        } else {
            throw new ConfigException("'" + key(name) + "' must be a number");
        }
        if (!(value >= min && value <= max)) {
            throw new ConfigException("'" + key(name) + "' must be between " + min + " and " + max + ", got " + value);
        }
        return value;
    }

    /** A string that must be one of {@code known}. */
    String choice(String name, String dflt, Collection<String> known) {
        String value = string(name, dflt);
        if (!known.contains(value)) {
            throw new ConfigException("'" + key(name) + "' must be one of " + known + ", got '" + value + "'");
        }
        return value;
    }

    int integer(String name, int dflt, int min, int max) {
        return (int) integer(name, (long) dflt, min, max);
    }

    List<String> strings(String name) {
        read.add(name);
        Object v = json.getValue(name);
        List<String> out = new ArrayList<>();
        if (v == null) {
            return out;
        }
        if (v instanceof String s) {
            for (String part : s.split(",")) {
                if (!part.isBlank()) {
                    out.add(part.trim());
                }
            }
            return out;
        }
        if (!(v instanceof JsonArray array)) {
            throw new ConfigException("'" + key(name) + "' must be a list of strings");
        }
        for (Object e : array) {
            if (!(e instanceof String s)) {
                throw new ConfigException("'" + key(name) + "' must be a list of strings");
            }
            out.add(s);
        }
        return out;
    }

    List<ConfigSection> sections(String name) {
        read.add(name);
        Object v = json.getValue(name);
        List<ConfigSection> out = new ArrayList<>();
        if (v == null) {
            return out;
        }
        if (!(v instanceof JsonArray array)) {
            throw new ConfigException("'" + key(name) + "' must be a list");
        }
        for (int i = 0; i < array.size(); i++) {
            if (!(array.getValue(i) instanceof JsonObject o)) {
                throw new ConfigException("'" + key(name) + "[" + i + "]' must be a mapping");
            }
            out.add(new ConfigSection(key(name) + "[" + i + "]", o));
        }
        return out;
    }

    /**
     * A list whose entries are names or mappings: a name {@code n} reads as the mapping
     * {@code {nameKey: n}}, so both forms are read alike ({@code filters: [a, {plugin: b, x: 1}]}). A
     * comma-separated string is a list of names.
     */
    List<ConfigSection> namesOrSections(String name, String nameKey) {
        read.add(name);
        Object v = json.getValue(name);
        List<ConfigSection> out = new ArrayList<>();
        if (v == null) {
            return out;
        }
        if (v instanceof String s) {
            for (String part : s.split(",")) {
                if (!part.isBlank()) {
                    out.add(new ConfigSection(
                            key(name) + "[" + out.size() + "]", new JsonObject().put(nameKey, part.trim())));
                }
            }
            return out;
        }
        if (!(v instanceof JsonArray array)) {
            throw new ConfigException("'" + key(name) + "' must be a list");
        }
        for (int i = 0; i < array.size(); i++) {
            String entry = key(name) + "[" + i + "]";
            Object e = array.getValue(i);
            if (e instanceof String s) {
                out.add(new ConfigSection(entry, new JsonObject().put(nameKey, s)));
            } else if (e instanceof JsonObject o) {
                out.add(new ConfigSection(entry, o));
            } else {
                throw new ConfigException("'" + entry + "' must be a name or a mapping");
            }
        }
        return out;
    }

    /**
     * One entry that is a name or a mapping, read alike as {@link #namesOrSections} reads a list's
     * entries ({@code picker: a} or {@code picker: {plugin: a, x: 1}}); null when absent.
     */
    ConfigSection nameOrSection(String name, String nameKey) {
        read.add(name);
        Object v = json.getValue(name);
        if (v == null) {
            return null;
        }
        if (v instanceof String s) {
            return new ConfigSection(key(name), new JsonObject().put(nameKey, s.trim()));
        }
        if (v instanceof JsonObject o) {
            return new ConfigSection(key(name), o);
        }
        throw new ConfigException("'" + key(name) + "' must be a name or a mapping");
    }

    /**
     * An {@code http.api-keys} entry given as a string, {@code KEY[:name=value...]}, as the mapping it stands
     * for; a mapping as it is.
     */
    ConfigSection expandKeyString() {
        if (json.size() == 1 && json.getValue("key") instanceof String k && k.contains(":")) {
            return new ConfigSection(path, ApiKeySpec.parse(k));
        }
        return this;
    }

    /** The keys this section holds, in order (a mapping of names to sections, such as {@code tenants}). */
    List<String> names() {
        return List.copyOf(json.fieldNames());
    }

    boolean has(String name) {
        return json.containsKey(name);
    }

    void rejectUnknownKeys() {
        for (String k : json.fieldNames()) {
            if (!read.contains(k)) {
                throw new ConfigException("unknown configuration key '" + key(k) + "'");
            }
        }
    }
}
