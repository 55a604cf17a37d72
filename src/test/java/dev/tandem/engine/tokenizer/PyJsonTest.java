package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Expected strings are Python 3's json.dumps output for the same values. */
class PyJsonTest {

    @Test
    void floatsPrintAsPythonsRepr() {
        double[] values = {1.5, 1e-05, 1e16, 123456789.0, 0.1, -0.0, 2.5e-7, 1e22, 100.0};
        String[] python = {"1.5", "1e-05", "1e+16", "123456789.0", "0.1", "-0.0", "2.5e-07", "1e+22", "100.0"};
        for (int i = 0; i < values.length; i++) {
            assertEquals(python[i], PyJson.dumps(values[i]), "repr of " + values[i]);
        }
    }

    @Test
    void spacingIndentEscapesAndSortingAreJsonDumps() {
        Map<String, Object> inner = new LinkedHashMap<>();
        inner.put("b", null);
        inner.put("c", true);
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("a", new ArrayList<>(Arrays.asList(1, 2, inner)));
        d.put("é", "x\"y\n\u0001");
        d.put("e", Map.of());
        d.put("f", List.of());
        assertEquals(
                "{\"a\": [1, 2, {\"b\": null, \"c\": true}], \"é\": \"x\\\"y\\n\\u0001\", \"e\": {}, \"f\": []}",
                PyJson.dumps(d));
        assertEquals(
                "{\n  \"a\": [\n    1,\n    2,\n    {\n      \"b\": null,\n      \"c\": true\n    }\n  ],\n"
                        + "  \"é\": \"x\\\"y\\n\\u0001\",\n  \"e\": {},\n  \"f\": []\n}",
                new PyJson("  ", null, false, false).write(d));
        assertEquals(
                "{\"a\":[1,2,{\"b\":null,\"c\":true}],\"e\":{},\"f\":[],\"\\u00e9\":\"x\\\"y\\n\\u0001\"}",
                new PyJson(null, List.of(",", ":"), true, true).write(d));
    }
}
