package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real chat templates of eleven models (src/test/resources/chat-templates, SOURCES.md
 * says where each came from) render byte for byte as Python's jinja2 renders them the way Hugging
 * Face does (src/test/python/render_chat_templates.py, Debian's python3-jinja2), for every
 * conversation in conversations.json. Where Python fails Java must fail too: with the same message
 * for the template's raise_exception; for a TypeError on input the template cannot take (a string
 * plus None or a dict) Java may fail at another expression of the same render.
 */
class JinjaChatTemplateOracleTest {

    private static final Path DIR = Path.of("src/test/resources/chat-templates");
    private static final String NOW = "2025-03-04T10:20:30";

    private static JsonObject expected;
    private static JsonArray conversations;

    @BeforeAll
    static void runOracle() throws Exception {
        Process p = new ProcessBuilder(
                        "python3",
                        "src/test/python/render_chat_templates.py",
                        DIR.toString(),
                        DIR.resolve("conversations.json").toString(),
                        NOW)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "oracle timed out");
        assertEquals(0, p.exitValue(), "the oracle needs python3 with jinja2 (apt-get install python3-jinja2)");
        expected = new JsonObject(new String(out, StandardCharsets.UTF_8));
        conversations =
                new JsonObject(Files.readString(DIR.resolve("conversations.json"))).getJsonArray("conversations");
    }

    @Test
    void everyTemplateRendersEveryConversationAsPythonDoes() throws IOException {
        JsonObject specials = new JsonObject(Files.readString(DIR.resolve("special-tokens.json")));
        Clock clock = Clock.fixed(LocalDateTime.parse(NOW).toInstant(ZoneOffset.UTC), ZoneOffset.UTC);
        List<String> failures = new ArrayList<>();
        Map<String, Integer> identical = new TreeMap<>();
        for (String file : specials.fieldNames()) {
            Map<String, String> tokens = new TreeMap<>();
            specials.getJsonObject(file).forEach(e -> tokens.put(e.getKey(), (String) e.getValue()));
            JinjaChatTemplate template =
                    new JinjaChatTemplate(file, Files.readString(DIR.resolve(file)), tokens, clock);
            JsonObject want = expected.getJsonObject(file);
            for (Object c : conversations) {
                JsonObject conv = (JsonObject) c;
                String failure = compare(template, conv, want.getJsonObject(conv.getString("name")));
                if (failure == null) {
                    identical.merge(
                            file, want.getJsonObject(conv.getString("name")).containsKey("text") ? 1 : 0, Integer::sum);
                } else {
                    failures.add(file + " × " + conv.getString("name") + ": " + failure);
                }
            }
        }
        if (!failures.isEmpty()) {
            fail(failures.size() + " renderings differ from Python's jinja2:\n" + String.join("\n\n", failures));
        }
        identical.forEach((file, n) -> assertTrue(n >= 10, file + " renders only " + n + " conversations"));
        System.out.println("byte-identical renderings per template: " + identical);
    }

    private static String compare(JinjaChatTemplate template, JsonObject conv, JsonObject want) {
        String got;
        try {
            got = template.render(ChatFixtures.prompt(conv));
        } catch (ChatTemplateException e) {
            if (!want.containsKey("error")) {
                return "Java failed (" + e.getMessage() + ") where Python rendered";
            }
            if (want.getString("type").equals("TemplateError")
                    && !want.getString("error").equals(e.getMessage())) {
                return "raise_exception message differs: Python '" + want.getString("error") + "', Java '"
                        + e.getMessage() + "'";
            }
            return null;
        }
        if (want.containsKey("error")) {
            return "Java rendered where Python failed (" + want.getString("type") + ": " + want.getString("error")
                    + "):\n" + got;
        }
        return firstDifference(want.getString("text"), got);
    }

    /** Null when equal, else where they part and a window of both around it. */
    static String firstDifference(String want, String got) {
        if (want.equals(got)) {
            return null;
        }
        int i = 0;
        while (i < want.length() && i < got.length() && want.charAt(i) == got.charAt(i)) {
            i++;
        }
        int from = Math.max(0, i - 60);
        return "first difference at char " + i + " (Python length " + want.length() + ", Java " + got.length()
                + ")\n  python: "
                + JsonArray.of(want.substring(from, Math.min(want.length(), i + 60)))
                        .encode()
                + "\n  java:   "
                + JsonArray.of(got.substring(from, Math.min(got.length(), i + 60)))
                        .encode();
    }
}
