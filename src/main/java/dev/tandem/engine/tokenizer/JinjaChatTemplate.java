package dev.tandem.engine.tokenizer;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import jinjava.javax.el.CompositeELResolver;

/**
 * A model's own chat template (tokenizer_config.json's {@code chat_template}), rendered as Hugging
 * Face transformers renders it ({@code chat_template_utils._compile_jinja_template}): Jinja with
 * trim_blocks and lstrip_blocks, loop controls, {@code raise_exception}, {@code strftime_now} and a
 * {@code tojson} that writes Python's json.dumps. Jinjava stands in for Python's jinja2; where the
 * two differ on what real templates use, {@link PyishResolver}, {@link PyishFilters} and
 * {@link TemplateSource#forJinjava} bridge it (JinjaChatTemplateOracleTest checks byte equality).
 */
public final class JinjaChatTemplate implements ChatTemplate {

    /** HF's marker for continue_final_message: the render is cut where it lands. */
    private static final String CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG ";

    private static final Jinjava JINJAVA = newJinjava();

    private final String name;
    private final String source;
    private final String jinjavaSource;
    private final Map<String, String> specialTokens;
    private final Clock clock;

    /**
     * @param specialTokens the tokenizer's {@code bos_token}, {@code eos_token}, … (HF passes them all
     *     to the template); null values are left out
     */
    public JinjaChatTemplate(String name, String source, Map<String, String> specialTokens, Clock clock) {
        this.name = Objects.requireNonNull(name, "name");
        this.source = Objects.requireNonNull(source, "source");
        this.jinjavaSource = TemplateSource.forJinjava(source);
        this.specialTokens = new HashMap<>();
        specialTokens.forEach((k, v) -> {
            if (v != null) {
                this.specialTokens.put(k, v);
            }
        });
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    public JinjaChatTemplate(String name, String source, Map<String, String> specialTokens) {
        this(name, source, specialTokens, Clock.systemDefaultZone());
    }

    @Override
    public String name() {
        return name;
    }

    /** The template's Jinja source as the model ships it. */
    @Override
    public String source() {
        return source;
    }

    /** The special tokens the template is given (bos_token, eos_token, …). */
    @Override
    public Map<String, String> specialTokens() {
        return Map.copyOf(specialTokens);
    }

    @Override
    public String render(List<ChatMessage> messages) {
        return render(ChatPrompt.of(messages));
    }

    @Override
    public String render(ChatPrompt prompt) {
        List<Map<String, Object>> messages = new ArrayList<>();
        for (ChatMessage m : prompt.messages()) {
            messages.add(m.toMap());
        }
        String finalText = null;
        if (prompt.continueFinalMessage()) {
            if (messages.isEmpty() || messages.get(messages.size() - 1).get("content") == null) {
                throw new ChatTemplateException("the final message has no content to continue");
            }
            Map<String, Object> last = messages.get(messages.size() - 1);
            finalText = (String) last.get("content");
            last.put("content", finalText + CONTINUE_TAG);
        }
        Map<String, Object> context = new HashMap<>(specialTokens);
        context.putAll(prompt.kwargs());
        context.put("messages", messages);
        context.put("tools", prompt.tools());
        context.put("documents", null);
        context.put("add_generation_prompt", prompt.addGenerationPrompt());
        context.put(PyishFunctions.CLOCK_KEY, clock);
        // Templates test `strftime_now is defined`; Jinjava's functions are not variables.
        context.put("strftime_now", true);
        context.put("raise_exception", true);
        String text = renderRaw(context);
        return finalText == null ? text : cutAtContinueTag(text, finalText);
    }

    private String renderRaw(Map<String, Object> context) {
        RenderResult result;
        try {
            result = JINJAVA.renderForResult(jinjavaSource, context);
        } catch (RuntimeException e) {
            throw new ChatTemplateException("chat template " + name + " failed: " + e.getMessage(), e);
        }
        for (TemplateError e : result.getErrors()) {
            String raised = PyishFunctions.raisedMessage(e);
            if (raised != null) {
                throw new ChatTemplateException(raised);
            }
        }
        for (TemplateError e : result.getErrors()) {
            if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
                throw new ChatTemplateException("chat template " + name + " failed: " + e.getMessage());
            }
        }
        return result.getOutput();
    }

    /** HF's continue_final_message: keep the render up to the end of the final message's text. */
    private static String cutAtContinueTag(String text, String finalText) {
        String tag = CONTINUE_TAG.strip();
        if (!text.contains(finalText.strip()) || !text.contains(tag)) {
            throw new ChatTemplateException(
                    "continue_final_message is set but the final message does not appear in the chat");
        }
        int at = text.lastIndexOf(tag);
        if (text.startsWith(CONTINUE_TAG, at)) {
            return text.substring(0, at);
        }
        return text.substring(0, at).stripTrailing();
    }

    private static Jinjava newJinjava() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PyishResolver());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_WRITE);
        JinjavaConfig config = JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                .withLstripBlocks(true)
                // Text from the request must stay text: Jinjava would otherwise render {{ }} inside it.
                .withNestedInterpretationEnabled(false)
                // A template comes from a model directory or a worker's card: bound what it may write.
                .withMaxOutputSize(64L << 20)
                .withElResolver(resolver)
                .withLegacyOverrides(LegacyOverrides.newBuilder()
                        .withEvaluateMapKeys(true)
                        .withIterateOverMapKeys(true)
                        .withUseNaturalOperatorPrecedence(true)
                        .withParseWhitespaceControlStrictly(true)
                        .withAllowAdjacentTextNodes(true)
                        .withUseTrimmingForNotesAndExpressions(true)
                        .withKeepNullableLoopValues(true)
                        .build())
                .build();
        Jinjava jinjava = new PyJinjava(config);
        for (ELFunctionDefinition f : PyishFunctions.definitions()) {
            jinjava.registerFunction(f);
        }
        PyishFilters.register(jinjava);
        return jinjava;
    }
}
