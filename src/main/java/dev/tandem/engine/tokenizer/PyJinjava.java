package dev.tandem.engine.tokenizer;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.el.ExtendedSyntaxBuilder;
import com.hubspot.jinjava.el.TruthyTypeConverter;
import com.hubspot.jinjava.el.ext.AdditionOperator;
import com.hubspot.jinjava.el.ext.ExtendedParser;
import java.util.Collection;
import java.util.Map;
import java.util.Properties;
import jinjava.de.odysseus.el.ExpressionFactoryImpl;
import jinjava.de.odysseus.el.misc.TypeConverter;
import jinjava.de.odysseus.el.tree.TreeBuilder;
import jinjava.de.odysseus.el.tree.impl.Builder;
import jinjava.de.odysseus.el.tree.impl.Parser;
import jinjava.de.odysseus.el.tree.impl.ast.AstBinary;
import jinjava.de.odysseus.el.tree.impl.ast.AstNode;
import jinjava.javax.el.ExpressionFactory;

/**
 * Jinjava whose {@code +} refuses a string plus a non-string as Python does ("can only concatenate
 * str (not "NoneType") to str"): Jinjava would write {@code null} or {@code {k=v}} into the prompt,
 * where HF's rendering (and so vLLM's) fails on that input.
 */
final class PyJinjava extends Jinjava {

    private final ExpressionFactory expressions;

    PyJinjava(JinjavaConfig config) {
        super(config);
        Properties p = new Properties();
        p.setProperty(TreeBuilder.class.getName(), PySyntaxBuilder.class.getName());
        p.setProperty("jinjava.javax.el.cacheSize", "0");
        this.expressions = new ExpressionFactoryImpl(p, new TruthyTypeConverter());
    }

    @Override
    public ExpressionFactory getExpressionFactory() {
        return expressions;
    }

    /** Jinjava's syntax with Python's {@code +}; public for the expression factory's reflection. */
    public static final class PySyntaxBuilder extends ExtendedSyntaxBuilder {
        private static final long serialVersionUID = 1L;

        public PySyntaxBuilder(Builder.Feature... features) {
            super(features);
        }

        @Override
        protected Parser createParser(String expression) {
            return new PyParser(this, expression);
        }
    }

    private static final class PyParser extends ExtendedParser {
        PyParser(Builder builder, String expression) {
            super(builder, expression);
        }

        @Override
        protected AstBinary createAstBinary(AstNode left, AstNode right, AstBinary.Operator operator) {
            return super.createAstBinary(left, right, operator == AdditionOperator.OP ? PyAddition.OP : operator);
        }
    }

    private static final class PyAddition extends AdditionOperator {
        static final PyAddition OP = new PyAddition();

        @Override
        protected Object apply(TypeConverter converter, Object a, Object b) {
            if (a instanceof CharSequence && !(b instanceof CharSequence)) {
                throw typeError(b);
            }
            if (b instanceof CharSequence && !(a instanceof CharSequence)) {
                throw typeError(a);
            }
            return super.apply(converter, a, b);
        }

        private static ChatTemplateException typeError(Object other) {
            return PyishFunctions.raised("can only concatenate str (not \"" + pyType(other) + "\") to str");
        }

        private static String pyType(Object v) {
            if (v == null) {
                return "NoneType";
            } else if (v instanceof Map<?, ?>) {
                return "dict";
            } else if (v instanceof Collection<?>) {
                return "list";
            } else if (v instanceof Boolean) {
                return "bool";
            } else if (v instanceof Double || v instanceof Float) {
                return "float";
            } else if (v instanceof Number) {
                return "int";
            }
            return v.getClass().getSimpleName();
        }
    }
}
