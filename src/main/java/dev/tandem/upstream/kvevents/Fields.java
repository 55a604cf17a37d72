package dev.tandem.upstream.kvevents;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.msgpack.value.Value;

/**
 * An event's fields by name, whichever encoding it came in: a tagged array ({@code [tag, field…]},
 * fields in declaration order, trailing defaults omitted) or a map with a {@code type} tag.
 */
record Fields(String tag, Map<String, Value> byName, List<Value> positional) {

    static Fields of(Value e, String where) {
        if (e.isArrayValue()
                && e.asArrayValue().size() >= 1
                && e.asArrayValue().get(0).isStringValue()) {
            List<Value> all = e.asArrayValue().list();
            return new Fields(all.get(0).asStringValue().asString(), null, all.subList(1, all.size()));
        }
        if (e.isMapValue()) {
            Map<String, Value> named = new HashMap<>();
            for (Map.Entry<Value, Value> f : e.asMapValue().map().entrySet()) {
                if (f.getKey().isStringValue()) {
                    named.put(f.getKey().asStringValue().asString(), f.getValue());
                }
            }
            Value type = named.get("type");
            if (type != null && type.isStringValue()) {
                return new Fields(type.asStringValue().asString(), named, null);
            }
        }
        throw new KvEventFormatException(where + " is neither [\"Tag\", …] nor {\"type\": \"Tag\", …}");
    }

    /** The same fields, positional ones named in declaration order (unknown trailing ones ignored). */
    Fields named(List<String> declared) {
        if (byName != null) {
            return this;
        }
        Map<String, Value> named = new HashMap<>();
        for (int i = 0; i < Math.min(declared.size(), positional.size()); i++) {
            named.put(declared.get(i), positional.get(i));
        }
        return new Fields(tag, named, null);
    }

    /** A field, or null when absent. */
    Value get(String name) {
        return byName == null ? null : byName.get(name);
    }

    /** The KV cache group an event is of: {@code group_idx}, 0 when absent. */
    int group() {
        Value g = get("group_idx");
        return g != null && g.isIntegerValue() && g.asIntegerValue().isInIntRange()
                ? g.asIntegerValue().toInt()
                : 0;
    }
}
