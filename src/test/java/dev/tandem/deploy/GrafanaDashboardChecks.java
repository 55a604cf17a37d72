package dev.tandem.deploy;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks of a Grafana dashboard (k8s/grafana/tandem.json): its structure, and the metric names its PromQL
 * queries read, found by a small tokenizer. Only what a metric name can be: quoted strings, label matchers,
 * ranges, grouping label lists and variables are dropped first; then an identifier followed by '(' is a
 * function or aggregation, and the PromQL keywords are no names.
 */
final class GrafanaDashboardChecks {
    /** Identifiers that are PromQL keywords, not metric names (aggregations are also caught by the '('). */
    static final Set<String> KEYWORDS = Set.of(
            "sum",
            "min",
            "max",
            "avg",
            "count",
            "stddev",
            "stdvar",
            "topk",
            "bottomk",
            "quantile",
            "count_values",
            "group",
            "limitk",
            "limit_ratio",
            "by",
            "without",
            "on",
            "ignoring",
            "group_left",
            "group_right",
            "and",
            "or",
            "unless",
            "bool",
            "offset",
            "atan2",
            "inf",
            "nan",
            "le");

    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`");
    private static final Pattern MATCHERS = Pattern.compile("\\{[^{}]*}");
    private static final Pattern RANGE = Pattern.compile("\\[[^\\[\\]]*]");
    private static final Pattern GROUPING = Pattern.compile(
            "\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^()]*\\)", Pattern.CASE_INSENSITIVE);
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{[^}]*}|\\$\\w+|\\[\\[[^\\]]*]]");
    private static final Pattern NUMBER = Pattern.compile("\\b0x[0-9a-fA-F]+\\b|\\b\\d[\\w.]*");
    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)");

    private GrafanaDashboardChecks() {}

    /** The metric names one PromQL expression reads. */
    static Set<String> metricNames(String expr) {
        String s = STRING.matcher(expr).replaceAll(" ");
        s = VARIABLE.matcher(s).replaceAll(" ");
        s = MATCHERS.matcher(s).replaceAll(" ");
        s = RANGE.matcher(s).replaceAll(" ");
        s = GROUPING.matcher(s).replaceAll(" ");
        s = NUMBER.matcher(s).replaceAll(" ");
        Set<String> names = new LinkedHashSet<>();
        Matcher m = IDENTIFIER.matcher(s);
        while (m.find()) {
            String id = m.group();
            int next = m.end();
            while (next < s.length() && Character.isWhitespace(s.charAt(next))) {
                next++;
            }
            boolean call = next < s.length() && s.charAt(next) == '(';
            if (!call && !KEYWORDS.contains(id.toLowerCase(java.util.Locale.ROOT))) {
                names.add(id);
            }
        }
        return names;
    }

    /** Every panel, those inside collapsed rows included, in order. */
    static List<JsonObject> panels(JsonObject dashboard) {
        List<JsonObject> out = new ArrayList<>();
        for (Object o : dashboard.getJsonArray("panels", new JsonArray())) {
            JsonObject p = (JsonObject) o;
            out.add(p);
            for (Object nested : p.getJsonArray("panels", new JsonArray())) {
                out.add((JsonObject) nested);
            }
        }
        return out;
    }

    /** Every PromQL expression: the panels' targets and the query variables' label_values metrics. */
    static Set<String> metricNames(JsonObject dashboard) {
        Set<String> names = new TreeSet<>();
        for (JsonObject p : panels(dashboard)) {
            for (Object t : p.getJsonArray("targets", new JsonArray())) {
                names.addAll(metricNames(((JsonObject) t).getString("expr", "")));
            }
        }
        for (Object v : dashboard.getJsonObject("templating").getJsonArray("list")) {
            Matcher m = LABEL_VALUES.matcher(((JsonObject) v).getString("definition", ""));
            if (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    /**
     * The dashboard's metric names that {@code exported} (the series names a scrape of /metrics shows) lacks
     * and {@code allowed} does not name, each with what the scrape has of that base name, if anything.
     */
    static List<String> unknownMetrics(JsonObject dashboard, Set<String> exported, Set<String> allowed) {
        List<String> unknown = new ArrayList<>();
        for (String name : metricNames(dashboard)) {
            if (exported.contains(name) || allowed.contains(name)) {
                continue;
            }
            String base = name.replaceAll("_(bucket|count|sum|max|total)$", "");
            List<String> near = exported.stream()
                    .filter(e -> e.equals(base) || e.matches(Pattern.quote(base) + "_(bucket|count|sum|max|total)"))
                    .sorted()
                    .toList();
            unknown.add(near.isEmpty() ? name : name + " (the scrape has " + near + ")");
        }
        return unknown;
    }

    /** Series names of a Prometheus text scrape (sample lines; # HELP and # TYPE are skipped). */
    static Set<String> seriesNames(String scrape) {
        Set<String> names = new HashSet<>();
        for (String line : scrape.split("\n")) {
            Matcher m = IDENTIFIER.matcher(line);
            if (!line.startsWith("#") && m.lookingAt()) {
                names.add(m.group());
            }
        }
        return names;
    }

    /** What is wrong with the dashboard's structure; empty when nothing is. */
    static List<String> structureProblems(JsonObject dashboard) {
        List<String> problems = new ArrayList<>(variableProblems(dashboard));
        Set<Integer> ids = new HashSet<>();
        for (JsonObject p : panels(dashboard)) {
            String name = "panel " + p.getValue("id") + " '" + p.getString("title") + "'";
            if (!(p.getValue("id") instanceof Integer id) || !ids.add(id)) {
                problems.add(name + ": id missing or not unique");
            }
            problems.addAll(gridProblems(name, p.getJsonObject("gridPos")));
            if (!"row".equals(p.getString("type"))) {
                problems.addAll(queryProblems(name, p));
            }
        }
        return problems;
    }

    private static List<String> variableProblems(JsonObject dashboard) {
        List<String> problems = new ArrayList<>();
        if (dashboard.getInteger("schemaVersion", 0) < 36) {
            problems.add("schemaVersion below 36: " + dashboard.getValue("schemaVersion"));
        }
        JsonObject datasource = variable(dashboard, "datasource");
        if (datasource == null
                || !"datasource".equals(datasource.getString("type"))
                || !"prometheus".equals(datasource.getString("query"))) {
            problems.add("no Prometheus datasource variable 'datasource'");
        }
        JsonObject model = variable(dashboard, "model");
        if (model == null || !model.getString("definition", "").startsWith("label_values(")) {
            problems.add("no 'model' variable from label_values(...)");
        }
        return problems;
    }

    private static JsonObject variable(JsonObject dashboard, String name) {
        JsonObject templating = dashboard.getJsonObject("templating", new JsonObject());
        for (Object v : templating.getJsonArray("list", new JsonArray())) {
            if (name.equals(((JsonObject) v).getString("name"))) {
                return (JsonObject) v;
            }
        }
        return null;
    }

    private static List<String> gridProblems(String name, JsonObject grid) {
        if (grid == null) {
            return List.of(name + ": no gridPos");
        }
        for (String k : List.of("h", "w", "x", "y")) {
            if (!(grid.getValue(k) instanceof Integer)) {
                return List.of(name + ": gridPos." + k + " missing or not an integer");
            }
        }
        if (grid.getInteger("x") + grid.getInteger("w") > 24 || grid.getInteger("h") < 1) {
            return List.of(name + ": gridPos outside the 24-column grid " + grid.encode());
        }
        return List.of();
    }

    private static List<String> queryProblems(String name, JsonObject panel) {
        List<String> problems = new ArrayList<>();
        if (!promDatasource(panel.getJsonObject("datasource"))) {
            problems.add(name + ": datasource is not the ${datasource} variable");
        }
        JsonArray targets = panel.getJsonArray("targets", new JsonArray());
        if (targets.isEmpty()) {
            problems.add(name + ": no targets");
        }
        for (Object o : targets) {
            JsonObject t = (JsonObject) o;
            if (t.getString("expr", "").isBlank()) {
                problems.add(name + ": target " + t.getString("refId") + " has no expr");
            }
            if (t.containsKey("datasource") && !promDatasource(t.getJsonObject("datasource"))) {
                problems.add(name + ": target " + t.getString("refId") + " has another datasource");
            }
        }
        return problems;
    }

    private static boolean promDatasource(JsonObject ds) {
        return ds != null && "prometheus".equals(ds.getString("type")) && "${datasource}".equals(ds.getString("uid"));
    }
}
