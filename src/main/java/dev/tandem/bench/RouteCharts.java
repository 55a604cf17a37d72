package dev.tandem.bench;

import java.util.List;
import java.util.Locale;

/** The route benchmark's two charts as self-contained SVG: hit rate per policy, and TTFT distributions. */
final class RouteCharts {
    private static final String[] COLORS = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
    private static final int W = 720;
    private static final int H = 360;
    private static final int LEFT = 70;
    private static final int RIGHT = 170;
    private static final int TOP = 20;
    private static final int BOTTOM = 50;

    private RouteCharts() {}

    /** One bar per policy, with the ideal hit rate (one infinite shared cache) as a dashed line. */
    static String hitRateBars(List<PolicyResult> results, double ideal) {
        StringBuilder sb = open("hit rate");
        double max = 1.0;
        int plotW = W - LEFT - RIGHT;
        int plotH = H - TOP - BOTTOM;
        axes(sb, plotW, plotH, "prompt tokens from cache", "");
        for (int t = 0; t <= 4; t++) {
            double v = max * t / 4;
            double y = TOP + plotH - v / max * plotH;
            sb.append(text(LEFT - 8, y + 4, "end", String.format(Locale.ROOT, "%.2f", v)));
        }
        double slot = (double) plotW / Math.max(1, results.size());
        for (int i = 0; i < results.size(); i++) {
            PolicyResult p = results.get(i);
            double h = p.hitRate() / max * plotH;
            double x = LEFT + i * slot + slot * 0.15;
            sb.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>",
                    x,
                    TOP + plotH - h,
                    slot * 0.7,
                    h,
                    COLORS[i % COLORS.length]));
            sb.append(text(x + slot * 0.35, TOP + plotH + 16, "middle", p.policy()));
            sb.append(text(
                    x + slot * 0.35, TOP + plotH - h - 4, "middle", String.format(Locale.ROOT, "%.3f", p.hitRate())));
        }
        double y = TOP + plotH - ideal / max * plotH;
        sb.append(String.format(
                Locale.ROOT,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"6 4\"/>",
                LEFT,
                y,
                LEFT + plotW,
                y));
        sb.append(text(LEFT + plotW + 6, y + 4, "start", String.format(Locale.ROOT, "ideal %.3f", ideal)));
        return sb.append("</svg>\n").toString();
    }

    /** The share of requests (y) whose TTFT is at most x ms, one curve per policy, x on a log scale. */
    static String ttftCdf(List<PolicyResult> results, double timeScale) {
        StringBuilder sb = open("TTFT");
        int plotW = W - LEFT - RIGHT;
        int plotH = H - TOP - BOTTOM;
        double lo = Double.MAX_VALUE;
        double hi = 0;
        double[][] samples = new double[results.size()][];
        for (int i = 0; i < results.size(); i++) {
            samples[i] = new Percentiles(results.get(i).requests().stream()
                            .filter(RequestResult::ok)
                            .mapToDouble(r -> r.ttftMs() * timeScale)
                            .toArray())
                    .sorted();
            for (double v : samples[i]) {
                lo = Math.min(lo, Math.max(v, 0.1));
                hi = Math.max(hi, v);
            }
        }
        if (hi <= 0) {
            return sb.append(text(W / 2.0, H / 2.0, "middle", "no successful request"))
                    .append("</svg>\n")
                    .toString();
        }
        double logLo = Math.floor(Math.log10(lo));
        double logHi = Math.ceil(Math.log10(hi));
        if (logHi <= logLo) {
            logHi = logLo + 1;
        }
        axes(sb, plotW, plotH, "share of requests", "TTFT (ms, log scale)");
        for (double e = logLo; e <= logHi; e++) {
            double x = LEFT + (e - logLo) / (logHi - logLo) * plotW;
            sb.append(text(x, TOP + plotH + 16, "middle", String.format(Locale.ROOT, "%.0f", Math.pow(10, e))));
        }
        for (int t = 0; t <= 4; t++) {
            double y = TOP + plotH - t / 4.0 * plotH;
            sb.append(text(LEFT - 8, y + 4, "end", String.format(Locale.ROOT, "%.2f", t / 4.0)));
        }
        for (int i = 0; i < samples.length; i++) {
            double[] s = samples[i];
            StringBuilder points = new StringBuilder();
            int step = Math.max(1, s.length / 400);
            for (int k = 0; k < s.length; k += step) {
                appendPoint(points, s[k], (k + 1.0) / s.length, logLo, logHi, plotW, plotH);
            }
            if (s.length > 0) {
                appendPoint(points, s[s.length - 1], 1.0, logLo, logHi, plotW, plotH);
            }
            String color = COLORS[i % COLORS.length];
            sb.append("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"")
                    .append(color)
                    .append("\" points=\"")
                    .append(points)
                    .append("\"/>");
            double ly = TOP + 14 + i * 18;
            sb.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"%.1f\" width=\"14\" height=\"4\" fill=\"%s\"/>",
                    LEFT + plotW + 10,
                    ly - 4,
                    color));
            sb.append(text(LEFT + plotW + 30, ly, "start", results.get(i).policy()));
        }
        return sb.append("</svg>\n").toString();
    }

    private static void appendPoint(
            StringBuilder points, double v, double share, double logLo, double logHi, int plotW, int plotH) {
        double x = LEFT + (Math.log10(Math.max(v, Math.pow(10, logLo))) - logLo) / (logHi - logLo) * plotW;
        double y = TOP + plotH - share * plotH;
        points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
    }

    private static StringBuilder open(String title) {
        return new StringBuilder(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
                        + "font-size=\"12\"><title>%s</title><rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>",
                W,
                H,
                title));
    }

    private static void axes(StringBuilder sb, int plotW, int plotH, String yLabel, String xLabel) {
        sb.append(String.format(
                Locale.ROOT,
                "<path d=\"M%d %d V%d H%d\" stroke=\"#333\" fill=\"none\"/>",
                LEFT,
                TOP,
                TOP + plotH,
                LEFT + plotW));
        sb.append(String.format(
                Locale.ROOT,
                "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">%s</text>",
                TOP + plotH / 2,
                yLabel));
        sb.append(text(LEFT + plotW / 2.0, H - 12, "middle", xLabel));
    }

    private static String text(double x, double y, String anchor, String s) {
        return String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>",
                x,
                y,
                anchor,
                BenchReport.escape(s));
    }
}
