package dev.tandem.bench;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The stop-the-world pauses of a unified GC log ({@code -Xlog:gc*}, Java 17 and later): every
 * {@code GC(n) Pause … 1.234ms} line — G1's and Parallel's and Serial's young, mixed, remark, cleanup and
 * full pauses, ZGC's and Shenandoah's short phase pauses ({@code Y:}/{@code O:} on generational ZGC).
 * Pauses of a collection someone asked for ({@code System.gc()}, as the soak does each minute to read the
 * live heap, or {@code jcmd GC.run}) are counted apart: they are the bench's cost, not the workload's.
 *
 * @param count           pauses the workload caused
 * @param fullCount       of them, full collections ({@code Pause Full}): the ones a heap running out causes
 * @param explicitCount   pauses of collections asked for
 */
record GcPauses(
        int count,
        double totalMs,
        double p50Ms,
        double p99Ms,
        double maxMs,
        int fullCount,
        int explicitCount,
        double explicitTotalMs) {

    private static final Pattern GC_ID = Pattern.compile("\\bGC\\((\\d+)\\) ");
    private static final Pattern PAUSE =
            Pattern.compile("\\bGC\\((\\d+)\\) (?:[YO]: )?Pause (.+?) (\\d+(?:\\.\\d+)?)ms\\s*$");

    static GcPauses parse(List<String> lines) {
        Set<String> explicit = explicitCollections(lines);
        List<Double> pauses = new ArrayList<>();
        int full = 0;
        int explicitCount = 0;
        double explicitMs = 0;
        for (String line : lines) {
            Matcher m = PAUSE.matcher(line);
            if (!m.find()) {
                continue;
            }
            double ms = Double.parseDouble(m.group(3));
            if (explicit.contains(m.group(1))) {
                explicitCount++;
                explicitMs += ms;
                continue;
            }
            pauses.add(ms);
            if (m.group(2).startsWith("Full")) {
                full++;
            }
        }
        double[] values = pauses.stream().mapToDouble(Double::doubleValue).toArray();
        Percentiles p = new Percentiles(values);
        double total = 0;
        for (double v : values) {
            total += v;
        }
        return new GcPauses(values.length, total, p.at(50), p.at(99), p.at(100), full, explicitCount, explicitMs);
    }

    /**
     * The ids of the collections asked for: a line of theirs names the cause ({@code Pause Full (System.gc())},
     * {@code Garbage Collection (System.gc())}, {@code (Diagnostic Command)}); Shenandoah names it in a
     * {@code Trigger:} line without an id, just before the collection's first line.
     */
    private static Set<String> explicitCollections(List<String> lines) {
        Set<String> ids = new HashSet<>();
        boolean triggered = false;
        for (String line : lines) {
            boolean asked = line.contains("(System.gc())") || line.contains("(Diagnostic Command)");
            Matcher id = GC_ID.matcher(line);
            if (!id.find()) {
                triggered |= asked && line.contains("Trigger:");
                continue;
            }
            if (asked || triggered) {
                ids.add(id.group(1));
                triggered = false;
            }
        }
        return ids;
    }
}
