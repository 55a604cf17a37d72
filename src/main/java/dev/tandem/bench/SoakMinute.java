package dev.tandem.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What the client saw of the requests due in one minute (1-based): how many, how they ended, and their
 * latencies. TTFT is over the streamed requests that got a first token (cancelled ones included: they
 * were cancelled after it); E2E over the completed ones, streamed or not. A figure without a sample is NaN.
 */
record SoakMinute(
        int minute,
        int requests,
        int completed,
        int cancelled,
        Map<SoakError, Integer> errors,
        double ttftP50Ms,
        double ttftP99Ms,
        double e2eP50Ms,
        double e2eP99Ms) {

    int errorsTotal() {
        return errors.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** One row per minute 1..{@code minutes}, each over the outcomes whose request was due in it. */
    static List<SoakMinute> of(Collection<SoakOutcome> outcomes, int minutes) {
        List<List<SoakOutcome>> byMinute = new ArrayList<>();
        for (int m = 0; m < minutes; m++) {
            byMinute.add(new ArrayList<>());
        }
        for (SoakOutcome o : outcomes) {
            byMinute.get(Math.min(o.minute(), minutes - 1)).add(o);
        }
        List<SoakMinute> rows = new ArrayList<>();
        for (int m = 0; m < minutes; m++) {
            rows.add(of(m + 1, byMinute.get(m)));
        }
        return rows;
    }

    /** The figures of {@code outcomes} under the label {@code minute} (the totals use 0). */
    static SoakMinute of(int minute, Collection<SoakOutcome> outcomes) {
        Map<SoakError, Integer> errors = new EnumMap<>(SoakError.class);
        for (SoakError e : SoakError.values()) {
            errors.put(e, 0);
        }
        double[] ttft = new double[outcomes.size()];
        double[] e2e = new double[outcomes.size()];
        int completed = 0;
        int cancelled = 0;
        int i = 0;
        for (SoakOutcome o : outcomes) {
            SoakResult r = o.result();
            ttft[i] = r.error() == null ? r.ttftMs() : Double.NaN;
            e2e[i] = r.completed() ? r.e2eMs() : Double.NaN;
            i++;
            if (r.error() != null) {
                errors.merge(r.error(), 1, Integer::sum);
            } else if (r.cancelled()) {
                cancelled++;
            } else {
                completed++;
            }
        }
        Percentiles t = new Percentiles(ttft);
        Percentiles e = new Percentiles(e2e);
        return new SoakMinute(
                minute, outcomes.size(), completed, cancelled, errors, t.at(50), t.at(99), e.at(50), e.at(99));
    }
}
