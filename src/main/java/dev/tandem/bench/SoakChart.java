package dev.tandem.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Locale;

/**
 * The soak's chart (SVG, no dependencies): per minute, TTFT p50 and p99 on the upper panel, the target's
 * heap after GC and resident set (MB) on the lower one. A flat lower panel is what a soak hopes to see.
 */
final class SoakChart {
    private static final int W = 720;
    private static final int PANEL_H = 220;
    private static final int LEFT = 70;
    private static final int RIGHT = 20;
    private static final int TOP = 40;
    private static final int GAP = 60;

    private record Series(String key, String label, String color, double scale) {}

    private SoakChart() {}

    static String svg(JsonArray rows) {
        int h = TOP + 2 * PANEL_H + GAP + 40;
        StringBuilder sb = new StringBuilder()
                .append(String.format(
                        Locale.ROOT,
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\""
                                + " font-size=\"12\">%n",
                        W,
                        h))
                .append("<text x=\"")
                .append(LEFT)
                .append("\" y=\"20\" font-size=\"14\">tandem bench soak: per minute</text>\n");
        panel(
                sb,
                rows,
                TOP,
                "TTFT, ms",
                List.of(new Series("ttftP50Ms", "p50", "#1f77b4", 1), new Series("ttftP99Ms", "p99", "#ff7f0e", 1)));
        panel(
                sb,
                rows,
                TOP + PANEL_H + GAP,
                "target memory, MB",
                List.of(
                        new Series("heapAfterLastGcBytes", "heap after GC", "#2ca02c", 1e-6),
                        new Series("heapAfterGcBytes", "after a full GC", "#17becf", 1e-6),
                        new Series("procRssBytes", "RSS (/proc)", "#d62728", 1e-6),
                        new Series("rssBytes", "RSS (/metrics)", "#9467bd", 1e-6)));
        return sb.append("</svg>\n").toString();
    }

    private static void panel(StringBuilder sb, JsonArray rows, int top, String title, List<Series> series) {
        double max = 0;
        for (Series s : series) {
            for (int i = 0; i < rows.size(); i++) {
                max = Math.max(max, value(rows.getJsonObject(i), s));
            }
        }
        max = max <= 0 ? 1 : max * 1.1;
        int bottom = top + PANEL_H;
        sb.append(text(LEFT, top - 8, "start", title))
                .append(line(LEFT, top, LEFT, bottom))
                .append(line(LEFT, bottom, W - RIGHT, bottom));
        for (int g = 0; g <= 4; g++) {
            double v = max * g / 4;
            int y = bottom - (int) Math.round(PANEL_H * g / 4.0);
            sb.append(text(
                    LEFT - 6, y + 4, "end", v == 0 ? "0" : String.format(Locale.ROOT, v < 10 ? "%.2f" : "%.0f", v)));
        }
        int n = rows.size();
        for (int i = 0; i < n; i++) {
            if (n <= 20 || (i + 1) % Math.max(1, n / 10) == 0) {
                sb.append(text(x(i, n), bottom + 16, "middle", Integer.toString(i + 1)));
            }
        }
        int legendX = W - RIGHT - 150;
        int legendY = top + 4;
        for (Series s : series) {
            StringBuilder points = new StringBuilder();
            for (int i = 0; i < n; i++) {
                double v = value(rows.getJsonObject(i), s);
                if (Double.isNaN(v)) {
                    continue;
                }
                int x = x(i, n);
                int y = bottom - (int) Math.round(PANEL_H * v / max);
                points.append(x).append(',').append(y).append(' ');
                sb.append(String.format(
                        Locale.ROOT,
                        "<circle cx=\"%d\" cy=\"%d\" r=\"2.5\" fill=\"%s\"><title>minute %d: %.3f</title></circle>%n",
                        x,
                        y,
                        s.color(),
                        i + 1,
                        v));
            }
            if (points.length() > 0) {
                sb.append(String.format(
                        "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>%n",
                        points.toString().trim(), s.color()));
            }
            sb.append(String.format(
                            Locale.ROOT,
                            "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>%n",
                            legendX,
                            legendY,
                            s.color()))
                    .append(text(legendX + 14, legendY + 9, "start", s.label()));
            legendY += 16;
        }
        sb.append(text((LEFT + W - RIGHT) / 2, bottom + 32, "middle", "minute"));
    }

    private static double value(JsonObject row, Series s) {
        Number v = (Number) row.getValue(s.key());
        return v == null ? Double.NaN : v.doubleValue() * s.scale();
    }

    private static int x(int i, int n) {
        int width = W - LEFT - RIGHT - 20;
        return LEFT + 10 + (n <= 1 ? width / 2 : (int) Math.round((double) width * i / (n - 1)));
    }

    private static String text(int x, int y, String anchor, String s) {
        return String.format(
                "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\">%s</text>%n", x, y, anchor, BenchReport.escape(s));
    }

    private static String line(int x1, int y1, int x2, int y2) {
        return String.format("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>%n", x1, y1, x2, y2);
    }
}
