package dev.tandem.engine.tokenizer;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * Python's str methods that chat templates call ({@code content.strip()}, {@code .split('</think>')},
 * {@code .startswith(...)}, …): Jinjava would look for Java methods of those names and find none.
 * Everything else falls through to Jinjava's own resolvers.
 */
final class PyishResolver extends ELResolver {

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] types, Object[] params) {
        if (!(base instanceof String s) || method == null) {
            return null;
        }
        Object[] p = params == null ? new Object[0] : params;
        Object result = PyStr.call(s, method.toString(), p);
        if (result != PyStr.NO_SUCH_METHOD) {
            context.setPropertyResolved(true);
            return result;
        }
        return null;
    }

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {}

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }

    /** Python's str methods on a Java string. */
    static final class PyStr {

        static final Object NO_SUCH_METHOD = new Object();

        private PyStr() {}

        static Object call(String s, String method, Object[] p) {
            return switch (method) {
                case "startswith" -> anyOf(p[0], prefix -> s.startsWith(prefix));
                case "endswith" -> anyOf(p[0], suffix -> s.endsWith(suffix));
                case "strip" -> rstrip(lstrip(s, arg(p)), arg(p));
                case "lstrip" -> lstrip(s, arg(p));
                case "rstrip" -> rstrip(s, arg(p));
                case "split" -> split(s, arg(p), p.length > 1 ? ((Number) p[1]).intValue() : -1);
                case "upper" -> s.toUpperCase(java.util.Locale.ROOT);
                case "lower" -> s.toLowerCase(java.util.Locale.ROOT);
                case "replace" -> s.replace(p[0].toString(), p[1].toString());
                case "find" -> s.indexOf(p[0].toString());
                case "rfind" -> s.lastIndexOf(p[0].toString());
                case "count" -> count(s, p[0].toString());
                case "join" -> join(s, p[0]);
                case "isspace" -> !s.isEmpty() && s.chars().allMatch(PyStr::isSpace);
                case "isdigit" -> !s.isEmpty() && s.chars().allMatch(Character::isDigit);
                default -> NO_SUCH_METHOD;
            };
        }

        private static String arg(Object[] p) {
            return p.length == 0 || p[0] == null ? null : p[0].toString();
        }

        private static boolean anyOf(Object arg, java.util.function.Predicate<String> test) {
            if (arg instanceof Collection<?> c) {
                return c.stream().anyMatch(o -> test.test(String.valueOf(o)));
            }
            return test.test(String.valueOf(arg));
        }

        /** Python's str.isspace() per character (Unicode whitespace, as str.strip() uses it). */
        static boolean isSpace(int c) {
            return Character.isWhitespace(c) || Character.isSpaceChar(c) || (c >= 0x1c && c <= 0x1f) || c == 0x85;
        }

        private static boolean strips(int c, String chars) {
            return chars == null ? isSpace(c) : chars.indexOf(c) >= 0;
        }

        static String lstrip(String s, String chars) {
            int i = 0;
            while (i < s.length() && strips(s.charAt(i), chars)) {
                i++;
            }
            return s.substring(i);
        }

        static String rstrip(String s, String chars) {
            int j = s.length();
            while (j > 0 && strips(s.charAt(j - 1), chars)) {
                j--;
            }
            return s.substring(0, j);
        }

        static List<String> split(String s, String sep, int maxSplit) {
            List<String> out = new ArrayList<>();
            if (sep == null) {
                for (String part : s.strip().split("\\s+", maxSplit < 0 ? 0 : maxSplit + 1)) {
                    if (!part.isEmpty()) {
                        out.add(part);
                    }
                }
                return out;
            }
            int from = 0;
            int at;
            while ((maxSplit < 0 || out.size() < maxSplit) && (at = s.indexOf(sep, from)) >= 0) {
                out.add(s.substring(from, at));
                from = at + sep.length();
            }
            out.add(s.substring(from));
            return out;
        }

        private static int count(String s, String sub) {
            if (sub.isEmpty()) {
                return s.length() + 1;
            }
            int n = 0;
            for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
                n++;
            }
            return n;
        }

        private static String join(String sep, Object items) {
            List<String> parts = new ArrayList<>();
            if (items instanceof Iterable<?> it) {
                it.forEach(o -> parts.add(PyRepr.str(o)));
            }
            return String.join(sep, parts);
        }
    }
}
