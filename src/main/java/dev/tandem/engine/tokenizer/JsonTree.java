package dev.tandem.engine.tokenizer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON object read with Jackson's streaming parser (the engine depends on no Vert.x): the
 * few settings objects of a {@code tokenizer.json}. Objects are {@code JsonTree}s, arrays lists.
 */
final class JsonTree {
    private static final JsonFactory JSON = new JsonFactory();
    private final Map<String, Object> fields;

    private JsonTree(Map<String, Object> fields) {
        this.fields = fields;
    }

    static JsonTree parse(String json) throws IOException {
        try (JsonParser p = JSON.createParser(json)) {
            p.nextToken();
            return (JsonTree) value(p);
        }
    }

    /** The value the parser is at (its first token read), parsed whole. */
    static Object value(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.START_OBJECT) {
            Map<String, Object> map = new LinkedHashMap<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                map.put(name, value(p));
            }
            return new JsonTree(map);
        }
        if (t == JsonToken.START_ARRAY) {
            List<Object> list = new ArrayList<>();
            while (p.nextToken() != JsonToken.END_ARRAY) {
                list.add(value(p));
            }
            return list;
        }
        return switch (t) {
            case VALUE_STRING -> p.getText();
            case VALUE_NUMBER_INT -> p.getIntValue();
            case VALUE_NUMBER_FLOAT -> p.getDoubleValue();
            case VALUE_TRUE -> Boolean.TRUE;
            case VALUE_FALSE -> Boolean.FALSE;
            case VALUE_NULL -> null;
            default -> throw new IOException("unexpected JSON " + t);
        };
    }

    boolean containsKey(String key) {
        return fields.containsKey(key);
    }

    Object getValue(String key) {
        return fields.get(key);
    }

    String getString(String key) {
        return getString(key, null);
    }

    String getString(String key, String otherwise) {
        return fields.get(key) instanceof String s ? s : otherwise;
    }

    boolean getBoolean(String key, boolean otherwise) {
        return fields.get(key) instanceof Boolean b ? b : otherwise;
    }

    Integer getInteger(String key) {
        return fields.get(key) instanceof Integer i ? i : null;
    }

    int getInteger(String key, int otherwise) {
        return fields.get(key) instanceof Integer i ? i : otherwise;
    }

    JsonTree getJsonObject(String key) {
        return fields.get(key) instanceof JsonTree t ? t : null;
    }

    @SuppressWarnings("unchecked")
    List<Object> getJsonArray(String key) {
        return fields.get(key) instanceof List<?> l ? (List<Object>) l : null;
    }

    List<Object> getJsonArray(String key, List<Object> otherwise) {
        List<Object> l = getJsonArray(key);
        return l != null ? l : otherwise;
    }

    @Override
    public String toString() {
        return fields.toString();
    }
}
