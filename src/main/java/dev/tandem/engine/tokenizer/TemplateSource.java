package dev.tandem.engine.tokenizer;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Rewrites of a template's source where Jinjava's grammar reads an expression otherwise than
 * Python's jinja2. Each rewrite keeps the meaning jinja2 gives the original.
 */
final class TemplateSource {

    /** A variable with attributes and subscripts, or a string literal, then any filters. */
    private static final String OPERAND = "(?:[A-Za-z_]\\w*(?:\\.[A-Za-z_]\\w*|\\[[^\\]\\[]*\\])*"
            + "|'[^']*'|\"[^\"]*\")(?:\\s*\\|\\s*[A-Za-z_]\\w*(?:\\([^()]*\\))?)*";

    // jinja2 reads `not x == y` as `not (x == y)` (also for is, in, <, …); Jinjava as `(not x) == y`.
    private static final Pattern NOT_COMPARE = Pattern.compile("(?<!\\bis\\s)\\bnot\\s+(" + OPERAND
            + ")\\s*(==|!=|<=|>=|<|>|\\bnot\\s+in\\b|\\bin\\b|\\bis\\s+not\\b|\\bis\\b)");

    // Jinjava's subscripts take [a:b] but no step: jinja2's x[::-1] is x reversed.
    private static final Pattern REVERSED =
            Pattern.compile("([A-Za-z_]\\w*(?:\\.[A-Za-z_]\\w*|\\[[^\\]\\[:]*\\])*)\\[\\s*:\\s*:\\s*-1\\s*\\]");

    private static final Pattern TAG = Pattern.compile("\\{[{%].*?[}%]\\}", Pattern.DOTALL);

    private TemplateSource() {}

    static String forJinjava(String source) {
        Matcher m = TAG.matcher(source);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String tag = REVERSED.matcher(m.group()).replaceAll("($1|reverse|list)");
            m.appendReplacement(sb, Matcher.quoteReplacement(namespaceArguments(notCompare(tag))));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /** {@code not x OP y} → {@code x NOT-OP y}: {@code ==}/{@code !=}, {@code <}/{@code >=}, in, is. */
    static String notCompare(String tag) {
        Matcher m = NOT_COMPARE.matcher(tag);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement(m.group(1) + " " + inverse(m.group(2)) + " "));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    private static String inverse(String op) {
        String o = op.replaceAll("\\s+", " ");
        return switch (o) {
            case "==" -> "!=";
            case "!=" -> "==";
            case "<" -> ">=";
            case ">=" -> "<";
            case ">" -> "<=";
            case "<=" -> ">";
            case "in" -> "not in";
            case "not in" -> "in";
            case "is" -> "is not";
            default -> "is"; // "is not"
        };
    }

    /**
     * {@code namespace(a=x|length - 1)} → {@code namespace(a=(x|length - 1))}: Jinjava binds the
     * keyword to the first operand only and subtracts from the keyword argument.
     */
    static String namespaceArguments(String source) {
        StringBuilder sb = new StringBuilder();
        int from = 0;
        int at;
        while ((at = source.indexOf("namespace(", from)) >= 0) {
            int open = at + "namespace(".length();
            int close = closingParen(source, open);
            if (close < 0) {
                break;
            }
            sb.append(source, from, open);
            sb.append(wrapKeywordValues(source.substring(open, close)));
            from = close;
        }
        return sb.append(source.substring(from)).toString();
    }

    private static String wrapKeywordValues(String args) {
        StringBuilder out = new StringBuilder();
        int depth = 0;
        int start = 0;
        for (int i = 0; i <= args.length(); i++) {
            char c = i < args.length() ? args.charAt(i) : ',';
            if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                depth--;
            } else if (c == '\'' || c == '"') {
                i = args.indexOf(c, i + 1);
                if (i < 0) {
                    return args;
                }
            } else if (c == ',' && depth == 0) {
                String arg = args.substring(start, i);
                Matcher kw = Pattern.compile("^(\\s*[A-Za-z_]\\w*\\s*=)(?!=)(.*)$", Pattern.DOTALL)
                        .matcher(arg);
                out.append(kw.matches() ? kw.group(1) + "(" + kw.group(2) + ")" : arg);
                if (i < args.length()) {
                    out.append(',');
                }
                start = i + 1;
            }
        }
        return out.toString();
    }

    private static int closingParen(String s, int from) {
        int depth = 1;
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\'' || c == '"') {
                i = s.indexOf(c, i + 1);
                if (i < 0) {
                    return -1;
                }
            } else if (c == '(') {
                depth++;
            } else if (c == ')' && --depth == 0) {
                return i;
            }
        }
        return -1;
    }
}
