package dev.tandem.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChatTemplateLoaderTest {

    private static final List<ChatMessage> HI = List.of(new ChatMessage("user", "hi"));

    @Test
    void readsTheStringTemplateAndSpecialTokensAsStringsOrObjects(@TempDir Path dir) throws Exception {
        Files.writeString(
                dir.resolve("tokenizer_config.json"),
                new JsonObject()
                        .put(
                                "chat_template",
                                "{{ bos_token }}{% for m in messages %}[{{ m.content }}]{% endfor %}{{ eos_token }}")
                        .put("bos_token", new JsonObject().put("content", "<s>").put("lstrip", false))
                        .put("eos_token", "</s>")
                        .encode());
        ChatTemplate t = ChatTemplateLoader.load(dir, Clock.systemUTC());
        assertEquals("<s>[hi]</s>", t.render(HI));
    }

    @Test
    void picksToolUseForChatsWithToolsAndDefaultOtherwise(@TempDir Path dir) throws Exception {
        JsonArray templates = new JsonArray()
                .add(new JsonObject().put("name", "default").put("template", "plain"))
                .add(new JsonObject().put("name", "tool_use").put("template", "tools:{{ tools|length }}"));
        Files.writeString(
                dir.resolve("tokenizer_config.json"),
                new JsonObject().put("chat_template", templates).encode());
        ChatTemplate t = ChatTemplateLoader.load(dir, Clock.systemUTC());
        assertEquals("plain", t.render(HI));
        assertEquals("tools:1", t.render(new ChatPrompt(HI, List.of(Map.of("type", "function")), true, false, null)));
    }

    @Test
    void aChatTemplateJinjaFileWinsAndNoTemplateIsNull(@TempDir Path dir) throws Exception {
        assertNull(ChatTemplateLoader.load(dir, Clock.systemUTC()));
        Files.writeString(
                dir.resolve("tokenizer_config.json"),
                new JsonObject().put("chat_template", "config").encode());
        Files.writeString(dir.resolve("chat_template.jinja"), "file");
        assertEquals("file", ChatTemplateLoader.load(dir, Clock.systemUTC()).render(HI));
    }

    @Test
    void raiseExceptionBecomesAChatTemplateExceptionWithTheTemplatesMessage() {
        JinjaChatTemplate t = new JinjaChatTemplate(
                "t",
                "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}ok",
                Map.of());
        assertEquals("ok", t.render(HI));
        ChatTemplateException e =
                assertThrows(ChatTemplateException.class, () -> t.render(List.of(new ChatMessage("system", "s"))));
        assertEquals("System role not supported", e.getMessage());
    }

    @Test
    void aModelCardWithoutTheNewFieldsStillDecodesAndOneWithThemRendersTheModelsTemplate() {
        var old = dev.tandem.protocol.ModelCard.CODEC.decode(new JsonObject()
                .put("context_length", 256)
                .put("tokenizer", "sha256:0123456789abcdef")
                .put("chat_template", "role-tags"));
        assertNull(old.chatTemplateSource());
        assertEquals(Map.of(), old.specialTokens());
        var card = dev.tandem.protocol.ModelCard.CODEC.decode(
                dev.tandem.protocol.ModelCard.CODEC.encode(new dev.tandem.protocol.ModelCard(
                        256,
                        "sha256:0123456789abcdef",
                        "m",
                        "{{ bos_token }}{{ messages[0].content }}",
                        Map.of("bos_token", "<s>"))));
        JinjaChatTemplate t =
                new JinjaChatTemplate(card.chatTemplate(), card.chatTemplateSource(), card.specialTokens());
        assertEquals("<s>hi", t.render(HI));
    }

    @Test
    void aTokenizerFileOrDirectoryBringsTheTemplateBesideIt(@TempDir Path dir) throws Exception {
        assertEquals(ChatTemplate.ROLE_TAGS, ChatTemplateLoader.besideTokenizer("", ChatTemplate.ROLE_TAGS));
        Path file = dir.resolve("tokenizer.bin");
        Files.writeString(file, "x");
        assertEquals(ChatTemplate.LLAMA2, ChatTemplateLoader.besideTokenizer(file.toString(), ChatTemplate.LLAMA2));
        Files.writeString(dir.resolve("chat_template.jinja"), "own:{{ messages[0].content }}");
        assertEquals(
                "own:hi",
                ChatTemplateLoader.besideTokenizer(file.toString(), ChatTemplate.LLAMA2)
                        .render(HI));
        assertEquals(
                "own:hi",
                ChatTemplateLoader.besideTokenizer(dir.toString(), ChatTemplate.LLAMA2)
                        .render(HI));
    }
}
