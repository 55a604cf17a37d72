package dev.tandem.engine.tokenizer;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import com.hubspot.jinjava.lib.filter.Filter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/** Filters and tests whose Jinjava versions differ from Python's jinja2 as HF configures it. */
final class PyishFilters {

    private PyishFilters() {}

    static void register(Jinjava jinjava) {
        jinjava.registerFilter(new ToJson());
        jinjava.registerExpTest(new IsIterable());
    }

    /** Python strings are iterable (Llama 3.1 tests a tool result with `is iterable`). */
    static final class IsIterable implements ExpTest {

        @Override
        public String getName() {
            return "iterable";
        }

        @Override
        public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
            return var instanceof CharSequence
                    || var instanceof Iterable<?>
                    || var instanceof Map<?, ?>
                    || (var != null && var.getClass().isArray());
        }
    }

    /**
     * HF's tojson: {@code json.dumps(x, ensure_ascii=False, indent=None, separators=None,
     * sort_keys=False)}, not jinja2's HTML-escaping one nor Jinjava's Jackson one.
     */
    static final class ToJson implements Filter {

        private static final List<String> PARAMS = List.of("ensure_ascii", "indent", "separators", "sort_keys");

        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, (Object[]) args, Map.of());
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object[] values = new Object[PARAMS.size()];
            for (int i = 0; i < args.length && i < values.length; i++) {
                values[i] = args[i];
            }
            for (int i = 0; i < PARAMS.size(); i++) {
                if (kwargs.containsKey(PARAMS.get(i))) {
                    values[i] = kwargs.get(PARAMS.get(i));
                }
            }
            String indent = null;
            if (values[1] instanceof Number n) {
                indent = " ".repeat(n.intValue());
            } else if (values[1] instanceof String s) {
                indent = s;
            }
            List<String> separators = null;
            if (values[2] instanceof Collection<?> c && c.size() == 2) {
                separators = new ArrayList<>();
                for (Object o : c) {
                    separators.add(String.valueOf(o));
                }
            }
            boolean ensureAscii = Boolean.TRUE.equals(values[0]);
            boolean sortKeys = Boolean.TRUE.equals(values[3]);
            return new PyJson(indent, separators, sortKeys, ensureAscii).write(var);
        }
    }
}
