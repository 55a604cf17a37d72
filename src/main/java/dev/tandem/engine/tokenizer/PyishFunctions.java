package dev.tandem.engine.tokenizer;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import java.time.Clock;
import java.time.LocalDateTime;
import java.util.List;

/** The globals HF gives chat templates: {@code raise_exception(message)} and {@code strftime_now(format)}. */
final class PyishFunctions {

    /** Context key of the Clock strftime_now reads (a name no template uses). */
    static final String CLOCK_KEY = "__tandem_clock__";

    // Jinjava turns a function's exception into a TemplateError with its own wording around the
    // message; the markers let the template's own message be recovered exactly.
    private static final String START = "\u27e6raise_exception:";
    private static final String END = "\u27e7";

    private PyishFunctions() {}

    static List<ELFunctionDefinition> definitions() {
        return List.of(
                new ELFunctionDefinition("", "raise_exception", PyishFunctions.class, "raiseException", Object.class),
                new ELFunctionDefinition("", "strftime_now", PyishFunctions.class, "strftimeNow", String.class));
    }

    public static Object raiseException(Object message) {
        throw raised(PyRepr.str(message));
    }

    /** An error that ends the render with exactly {@code message} (see {@link #raisedMessage}). */
    static ChatTemplateException raised(String message) {
        return new ChatTemplateException(START + message + END);
    }

    public static String strftimeNow(String format) {
        Object clock = JinjavaInterpreter.getCurrent().getContext().get(CLOCK_KEY);
        LocalDateTime now = LocalDateTime.now(clock instanceof Clock c ? c : Clock.systemDefaultZone());
        return PyStrftime.format(now, format);
    }

    /** The message a template passed to raise_exception, if this error is that, else null. */
    static String raisedMessage(TemplateError error) {
        for (String text : new String[] {error.getMessage(), String.valueOf(error.getException())}) {
            if (text == null) {
                continue;
            }
            int start = text.indexOf(START);
            int end = text.indexOf(END, start + 1);
            if (start >= 0 && end > start) {
                return text.substring(start + START.length(), end);
            }
        }
        Throwable t = error.getException();
        while (t != null) {
            String raised = t.getMessage() == null ? null : between(t.getMessage());
            if (raised != null) {
                return raised;
            }
            t = t.getCause();
        }
        return null;
    }

    private static String between(String text) {
        int start = text.indexOf(START);
        int end = text.indexOf(END, start + 1);
        return start >= 0 && end > start ? text.substring(start + START.length(), end) : null;
    }
}
