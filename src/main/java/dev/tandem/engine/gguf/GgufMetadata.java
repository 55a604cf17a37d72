package dev.tandem.engine.gguf;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** A GGUF file's key–value metadata, in file order, with typed reads that name the key when it is missing or mistyped. */
public final class GgufMetadata {
    private final Map<String, GgufValue> values;

    GgufMetadata(Map<String, GgufValue> values) {
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    public Set<String> keys() {
        return values.keySet();
    }

    public Map<String, GgufValue> asMap() {
        return values;
    }

    public boolean has(String key) {
        return values.containsKey(key);
    }

    public GgufValue get(String key) {
        GgufValue v = values.get(key);
        if (v == null) {
            throw new GgufFormatException("the GGUF metadata has no '" + key + "'");
        }
        return v;
    }

    public String string(String key) {
        return cast(key, String.class);
    }

    public String string(String key, String fallback) {
        return has(key) ? string(key) : fallback;
    }

    /** Any integer type, as a long. */
    public long integer(String key) {
        return cast(key, Long.class);
    }

    public long integer(String key, long fallback) {
        return has(key) ? integer(key) : fallback;
    }

    /** A FLOAT32 or FLOAT64, as a double. */
    public double number(String key) {
        Object v = get(key).value();
        if (v instanceof Float f) {
            return f;
        }
        if (v instanceof Double d) {
            return d;
        }
        throw mistyped(key, "a float");
    }

    public double number(String key, double fallback) {
        return has(key) ? number(key) : fallback;
    }

    public boolean bool(String key, boolean fallback) {
        return has(key) ? cast(key, Boolean.class) : fallback;
    }

    public String[] strings(String key) {
        return cast(key, String[].class);
    }

    public float[] floats(String key) {
        return cast(key, float[].class);
    }

    public long[] integers(String key) {
        return cast(key, long[].class);
    }

    private <T> T cast(String key, Class<T> type) {
        Object v = get(key).value();
        if (!type.isInstance(v)) {
            throw mistyped(key, type.getSimpleName());
        }
        return type.cast(v);
    }

    private GgufFormatException mistyped(String key, String expected) {
        GgufValue v = values.get(key);
        return new GgufFormatException("the GGUF metadata's '" + key + "' is " + v.type()
                + (v.elementType() != null ? " of " + v.elementType() : "") + ", not " + expected);
    }
}
