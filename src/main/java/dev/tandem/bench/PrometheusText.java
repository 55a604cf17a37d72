package dev.tandem.bench;

/**
 * Sums of series in a Prometheus text exposition ({@code GET /metrics}): enough to read a gauge summed
 * over its labels (every worker's KV cache) or over the series whose labels contain a given pair (the
 * heap's pools). NaN when no series matches, so a metric the target does not export reads as unknown,
 * not as zero.
 */
final class PrometheusText {
    private final String text;

    PrometheusText(String text) {
        this.text = text;
    }

    /** The sum of every series of {@code name}, whatever its labels. */
    double sum(String name) {
        return sum(name, "");
    }

    /** The sum of the series of {@code name} whose labels contain {@code label} (e.g. {@code area="heap"}). */
    double sum(String name, String label) {
        double sum = 0;
        boolean found = false;
        for (String line : text.split("\n")) {
            if (line.startsWith("#") || !line.startsWith(name)) {
                continue;
            }
            int end = name.length();
            if (end >= line.length() || (line.charAt(end) != '{' && line.charAt(end) != ' ')) {
                continue; // a longer name with this one as its prefix
            }
            int valueAt = line.lastIndexOf(' ');
            String series = line.substring(0, valueAt);
            if (!label.isEmpty() && !series.contains(label)) {
                continue;
            }
            try {
                double v = Double.parseDouble(line.substring(valueAt + 1).trim());
                if (!Double.isNaN(v)) {
                    sum += v;
                    found = true;
                }
            } catch (NumberFormatException e) {
                // a timestamp after the value, or a malformed line: not a number we can use
            }
        }
        return found ? sum : Double.NaN;
    }
}
