package dev.tandem.bench;

import java.util.Locale;
import java.util.Map;

/** The chart of {@code tandem bench load}: TTFT p50 and p99 per target, as bars (SVG, no dependencies). */
final class LoadChart {
    private static final int W = 640;
    private static final int H = 320;
    private static final int LEFT = 70;
    private static final int BOTTOM = 40;
    private static final int TOP = 30;

    private LoadChart() {}

    static String ttft(Map<String, LoadTargetResult> results) {
        double max = 0;
        for (LoadTargetResult r : results.values()) {
            max = Math.max(max, Double.isNaN(r.ttftP99Ms()) ? 0 : r.ttftP99Ms());
        }
        max = max <= 0 ? 1 : max * 1.1;
        int plotH = H - TOP - BOTTOM;
        int slot = (W - LEFT - 20) / Math.max(1, results.size());
        StringBuilder sb = new StringBuilder()
                .append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
                .append(W)
                .append("\" height=\"")
                .append(H)
                .append("\" font-family=\"sans-serif\" font-size=\"12\">\n")
                .append("<text x=\"")
                .append(LEFT)
                .append("\" y=\"18\" font-size=\"14\">Time to first token by target (p50 dark, p99 light), ms</text>\n")
                .append(line(LEFT, TOP, LEFT, H - BOTTOM))
                .append(line(LEFT, H - BOTTOM, W - 10, H - BOTTOM));
        for (int g = 0; g <= 4; g++) {
            double v = max * g / 4;
            int y = H - BOTTOM - (int) Math.round(plotH * g / 4.0);
            sb.append(String.format(
                    Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.2f</text>%n", LEFT - 6, y + 4, v));
        }
        int i = 0;
        for (LoadTargetResult r : results.values()) {
            int x = LEFT + 10 + i * slot;
            bar(sb, x, slot / 3, r.ttftP50Ms(), max, plotH, "#1f77b4");
            bar(sb, x + slot / 3 + 4, slot / 3, r.ttftP99Ms(), max, plotH, "#aec7e8");
            sb.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    x + slot / 3,
                    H - BOTTOM + 18,
                    r.name()));
            i++;
        }
        return sb.append("</svg>\n").toString();
    }

    private static void bar(StringBuilder sb, int x, int width, double value, double max, int plotH, String color) {
        if (Double.isNaN(value)) {
            return;
        }
        int h = (int) Math.round(plotH * value / max);
        sb.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%.3f ms</title></rect>%n",
                x,
                H - BOTTOM - h,
                width,
                h,
                color,
                value));
    }

    private static String line(int x1, int y1, int x2, int y2) {
        return String.format("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>%n", x1, y1, x2, y2);
    }
}
