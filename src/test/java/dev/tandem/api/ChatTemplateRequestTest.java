package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.engine.tokenizer.JinjaChatTemplate;
import dev.tandem.router.ServedModel;
import dev.tandem.router.ServedModels;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Chat bodies reach a model's own template with the options vLLM's chat endpoint gives it. */
class ChatTemplateRequestTest {

    private static final String TEMPLATE = "{{ bos_token }}{% if messages[0].role == 'system' %}"
            + "{{ raise_exception('System role not supported') }}{% endif %}"
            + "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% if m.reasoning_content is defined %}"
            + "[{{ m.reasoning_content }}]{% endif %}</{{ m.role }}>{% endfor %}"
            + "{% if add_generation_prompt %}<assistant>{% if enable_thinking is defined and not enable_thinking %}"
            + "<nothink>{% endif %}{% endif %}";

    private static final String TOOLS_TEMPLATE = "{% if tools %}tools={{ tools|tojson }};{% endif %}"
            + "{% for m in messages %}{{ m.role }}:{% if m.tool_calls is defined %}"
            + "{% for c in m.tool_calls %}{{ c.function.name }}({{ c.function.arguments|tojson }}){% endfor %}"
            + "{% else %}{{ m.content }}{% endif %}{% if m.tool_call_id is defined %}#{{ m.tool_call_id }}{% endif %};"
            + "{% endfor %}";

    private static final ServedModel TOOL_MODEL = new ServedModel(
            "t", 2, 4096, ByteTokenizer.INSTANCE, new JinjaChatTemplate("tools", TOOLS_TEMPLATE, Map.of()));

    private static final ServedModel BUILTIN =
            new ServedModel("b", 3, 4096, ByteTokenizer.INSTANCE, dev.tandem.engine.tokenizer.ChatTemplate.ROLE_TAGS);

    private static final ServedModel MODEL = new ServedModel(
            "m", 1, 4096, ByteTokenizer.INSTANCE, new JinjaChatTemplate("own", TEMPLATE, Map.of("bos_token", "<s>")));

    private final OpenAiRequestParser parser = new OpenAiRequestParser(
            new ServedModels() {
                @Override
                public Pick pick(String requested) {
                    return Pick.of("t".equals(requested) ? TOOL_MODEL : "b".equals(requested) ? BUILTIN : MODEL);
                }

                @Override
                public List<ServedModel> listed() {
                    return List.of(MODEL);
                }

                @Override
                public ServedModel known(String name) {
                    return MODEL;
                }
            },
            16);

    private String prompt(String json) {
        int[] tokens = parser.parseChat(new JsonObject(json), null).generation().promptTokens();
        byte[] bytes = new byte[tokens.length];
        for (int i = 0; i < tokens.length; i++) {
            assertTrue(tokens[i] < 256, "no BOS id: the template wrote bos_token as text");
            bytes[i] = (byte) tokens[i];
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void theModelsTemplateRendersWithAGenerationPromptByDefault() {
        assertEquals(
                "<s><user>hi</user><assistant>", prompt("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
    }

    @Test
    void addGenerationPromptFalseContinueFinalMessageAndKwargsReachTheTemplate() {
        assertEquals(
                "<s><user>hi</user>",
                prompt("{\"add_generation_prompt\":false,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
        assertEquals(
                "<s><user>hi</user><assistant>Once upon",
                prompt("{\"continue_final_message\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                        + "{\"role\":\"assistant\",\"content\":\"Once upon\"}]}"));
        assertEquals(
                "<s><user>hi</user><assistant><nothink>",
                prompt("{\"chat_template_kwargs\":{\"enable_thinking\":false},"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
        assertEquals(
                "<s><user>q</user><assistant>a[why]</assistant><user>q2</user><assistant>",
                prompt("{\"messages\":[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\","
                        + "\"content\":\"a\",\"reasoning_content\":\"why\"},{\"role\":\"user\",\"content\":\"q2\"}]}"));
    }

    @Test
    void aTemplatesRaiseExceptionIsAn400InvalidRequestOnMessages() {
        ApiException e = assertThrows(
                ApiException.class,
                () -> prompt(
                        "{\"messages\":[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"hi\"}]}"));
        assertEquals(400, e.status());
        assertEquals("invalid_request_error", e.type());
        assertEquals("messages", e.param());
        assertEquals("System role not supported", e.getMessage());
    }

    @Test
    void continuingAndOpeningATurnTogetherIsRefused() {
        ApiException e = assertThrows(
                ApiException.class,
                () -> prompt("{\"continue_final_message\":true,\"add_generation_prompt\":true,"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
        assertEquals("continue_final_message", e.param());
    }

    private static final String TOOL_CHAT = "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"w\"}}],"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"q\"},"
            + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
            + "\"function\":{\"name\":\"w\",\"arguments\":\"{\\\"city\\\": \\\"Z\u00fcrich\\\"}\"}}]},"
            + "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"21 C\"}]";

    @Test
    void toolsToolCallsAndToolResultsReachAModelsOwnTemplateWithArgumentsAsObjects() {
        assertEquals(
                "tools=[{\"type\": \"function\", \"function\": {\"name\": \"w\"}}];user:q;"
                        + "assistant:w({\"city\": \"Z\u00fcrich\"});tool:21 C#c1;",
                prompt(TOOL_CHAT.replace("{\"tools\"", "{\"model\":\"t\",\"tools\"") + "}"));
    }

    @Test
    void aBuiltinTemplateStillRefusesToolsAndToolMessagesByName() {
        ApiException tools = assertThrows(
                ApiException.class,
                () -> prompt("{\"model\":\"b\",\"tools\":[{\"type\":\"function\"}],"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}"));
        assertEquals("tools", tools.param());
        ApiException role = assertThrows(
                ApiException.class,
                () -> prompt("{\"model\":\"b\",\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]}"));
        assertEquals("messages[0].role", role.param());
    }
}
