package dev.tandem.engine.tokenizer;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A model directory's own chat template, found where HF transformers finds it: a
 * {@code chat_template.jinja} file, else tokenizer_config.json's {@code chat_template} (a string, or
 * a list of {@code {name, template}} of which "default" serves chats and "tool_use", when present,
 * chats with tools). The template gets the config's {@code bos_token} and {@code eos_token}.
 */
public final class ChatTemplateLoader {

    private ChatTemplateLoader() {}

    /** The directory's template, or null when it has none (the caller keeps its role-tags default). */
    public static ChatTemplate load(Path modelDir, Clock clock) {
        Path configFile = modelDir.resolve("tokenizer_config.json");
        JsonObject config = Files.isRegularFile(configFile) ? new JsonObject(read(configFile)) : new JsonObject();
        Map<String, String> tokens = new LinkedHashMap<>();
        for (String key : new String[] {"bos_token", "eos_token", "unk_token", "pad_token"}) {
            tokens.put(key, tokenText(config.getValue(key)));
        }
        Map<String, String> sources = sources(modelDir, config);
        if (sources.isEmpty()) {
            return null;
        }
        String name = modelDir.getFileName() == null
                ? "model"
                : modelDir.getFileName().toString();
        Map<String, ChatTemplate> named = new LinkedHashMap<>();
        sources.forEach((k, src) -> named.put(k, new JinjaChatTemplate(name, src, tokens, clock)));
        return ToolAwareChatTemplate.of(named);
    }

    /** Template sources by name ("default", "tool_use", …), in HF's order of precedence. */
    static Map<String, String> sources(Path modelDir, JsonObject config) {
        Map<String, String> out = new LinkedHashMap<>();
        Path jinja = modelDir.resolve("chat_template.jinja");
        if (Files.isRegularFile(jinja)) {
            out.put("default", read(jinja));
            return out;
        }
        Object t = config.getValue("chat_template");
        if (t instanceof String s) {
            out.put("default", s);
        } else if (t instanceof JsonArray list) {
            for (Object o : list) {
                if (o instanceof JsonObject entry && entry.getString("template") != null) {
                    out.put(entry.getString("name", "default"), entry.getString("template"));
                }
            }
        }
        return out;
    }

    /** A special token as tokenizer_config.json writes it: a string or an AddedToken object. */
    static String tokenText(Object value) {
        if (value instanceof String s) {
            return s;
        } else if (value instanceof JsonObject o) {
            return o.getString("content");
        }
        return null;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
