package dev.tandem.engine.tokenizer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
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
        TokenizerConfig config = TokenizerConfig.in(modelDir);
        Map<String, String> tokens = new LinkedHashMap<>();
        for (String key : new String[] {"bos_token", "eos_token", "unk_token", "pad_token"}) {
            tokens.put(key, config.specialToken(key));
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

    /**
     * The template of the model directory a tokenizer path names (the directory itself, or the one
     * holding the tokenizer file), else {@code fallback}. Blocking: reads files.
     */
    public static ChatTemplate besideTokenizer(String tokenizer, ChatTemplate fallback) {
        if (tokenizer == null || tokenizer.isBlank()) {
            return fallback;
        }
        Path p = Path.of(tokenizer).toAbsolutePath();
        Path dir = Files.isDirectory(p) ? p : p.getParent();
        ChatTemplate own = dir == null ? null : load(dir, Clock.systemDefaultZone());
        return own == null ? fallback : own;
    }

    /** Template sources by name ("default", "tool_use", …), in HF's order of precedence. */
    static Map<String, String> sources(Path modelDir, TokenizerConfig config) {
        Map<String, String> out = new LinkedHashMap<>();
        Path jinja = modelDir.resolve("chat_template.jinja");
        if (Files.isRegularFile(jinja)) {
            out.put("default", read(jinja));
            return out;
        }
        Object t = config.get("chat_template");
        if (t instanceof String s) {
            out.put("default", s);
        } else if (t instanceof List<?> list) {
            for (Object o : list) {
                if (o instanceof Map<?, ?> entry && entry.get("template") instanceof String template) {
                    Object name = entry.get("name");
                    out.put(name instanceof String n ? n : "default", template);
                }
            }
        }
        return out;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
