package dev.tandem.bench;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
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
 * @param startupCount    pauses before the traffic began (lines stamped earlier; start-up, a node reserving
 *                        its KV pool), counted apart from the workload's
 */
record GcPauses(
        int count,
        double totalMs,
        double p50Ms,
        double p99Ms,
        double maxMs,
        int fullCount,
        int explicitCount,
        double explicitTotalMs,
        int startupCount,
        double startupTotalMs) {

    private static final Pattern GC_ID = Pattern.compile("\\bGC\\((\\d+)\\) ");
    private static final Pattern PAUSE =
            Pattern.compile("\\bGC\\((\\d+)\\) (?:[YO]: )?Pause (.+?) (\\d+(?:\\.\\d+)?)ms\\s*$");

    /** A {@code time} decoration: {@code [2026-12-04T18:50:19.757+0000]}. */
    private static final Pattern TIME = Pattern.compile("^\\[(\\d{4}-\\d\\d-\\d\\dT[^\\]]+)\\]");

    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ");

    static GcPauses parse(List<String> lines) {
        return parse(lines, null);
    }

    /** The pauses from {@code trafficStart} on (null: all); earlier ones, on stamped lines, are the start-up's. */
    static GcPauses parse(List<String> lines, Instant trafficStart) {
        Set<String> explicit = explicitCollections(lines);
        List<Double> pauses = new ArrayList<>();
        int full = 0;
        int explicitCount = 0;
        double explicitMs = 0;
        int startup = 0;
        double startupMs = 0;
        for (String line : lines) {
            Matcher m = PAUSE.matcher(line);
            if (!m.find()) {
                continue;
            }
            double ms = Double.parseDouble(m.group(3));
            if (trafficStart != null && before(line, trafficStart)) {
                startup++;
                startupMs += ms;
                continue;
            }
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
        return new GcPauses(
                values.length,
                total,
                p.at(50),
                p.at(99),
                p.at(100),
                full,
                explicitCount,
                explicitMs,
                startup,
                startupMs);
    }

    private static boolean before(String line, Instant start) {
        Matcher t = TIME.matcher(line);
        if (!t.find()) {
            return false;
        }
        try {
            return OffsetDateTime.parse(t.group(1), STAMP).toInstant().isBefore(start);
        } catch (DateTimeParseException e) {
            return false;
        }
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
