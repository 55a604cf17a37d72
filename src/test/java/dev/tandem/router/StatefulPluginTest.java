package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.scheduling.MaxScorePicker;
import dev.tandem.router.scheduling.ModelMatchFilter;
import dev.tandem.router.scheduling.NotDrainingFilter;
import dev.tandem.router.scheduling.NotFailedFilter;
import dev.tandem.router.scheduling.SchedulingObserver;
import dev.tandem.router.scheduling.SchedulingProfile;
import dev.tandem.router.scheduling.SchedulingRequest;
import dev.tandem.router.scheduling.StatefulPlugin;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A stateful plugin is asked before every choice of its profile and told only of the picks that were
 * taken: a decode worker dropped because no prefill worker can feed it is never learnt, and a local
 * prefill teaches the decode profile alone.
 */
class StatefulPluginTest {

    /** Records the candidates it was shown and the picks it was told of. */
    static final class Recorder implements StatefulPlugin {
        final List<String> shown = new ArrayList<>();
        final List<String> picked = new ArrayList<>();

        @Override
        public String name() {
            return "recorder";
        }

        @Override
        public SchedulingRequest prepare(SchedulingRequest request, List<WorkerView> workers) {
            shown.add(String.join("+", workers.stream().map(WorkerView::id).toList()));
            return request;
        }

        @Override
        public void onPicked(SchedulingRequest request, WorkerView choice) {
            picked.add(choice.id());
        }
    }

    private static SchedulingProfile profile(String name, Recorder recorder) {
        return new SchedulingProfile(
                name,
                List.of(recorder),
                List.of(new NotFailedFilter(), new ModelMatchFilter(), new NotDrainingFilter()),
                List.of(),
                new MaxScorePicker());
    }

    private static PairScheduler scheduler(
            List<WorkerView> p,
            List<WorkerView> d,
            Recorder prefill,
            Recorder decode,
            PrefixLookup index,
            int localPrefillMaxTokens) {
        return new PairScheduler(
                role -> role == WorkerRole.PREFILL ? p : d,
                profile("prefill", prefill),
                profile("decode", decode),
                SchedulingObserver.NONE,
                index,
                localPrefillMaxTokens);
    }

    /** Workers as in PairSchedulerTest ("p1:7!" drains); what each profile was asked, and told. */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("a pair taken: both profiles learn it", List.of("p1:7"), List.of("d1:7"), 1, "d1", "p1"),
                Arguments.of(
                        "d1 is picked first, but its only feeder drains: dropped, not learnt; d2 is",
                        List.of("p1:7!", "p2:9"),
                        List.of("d1:7", "d2:9"),
                        2,
                        "d2",
                        "p2"),
                Arguments.of("no pair at all: nothing learnt", List.of("p1:7!"), List.of("d1:7"), 2, "", ""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void onlyTakenPicksAreLearnt(
            String name,
            List<String> prefill,
            List<String> decode,
            int decodeAsked,
            String decodeLearnt,
            String prefillLearnt) {
        List<WorkerView> p = PairSchedulerTest.workers(WorkerRole.PREFILL, prefill);
        List<WorkerView> d = PairSchedulerTest.workers(WorkerRole.DECODE, decode);
        Recorder prefillRecorder = new Recorder();
        Recorder decodeRecorder = new Recorder();
        PairScheduler scheduler = scheduler(p, d, prefillRecorder, decodeRecorder, PrefixLookup.NONE, 0);
        scheduler.choose(null, null, new int[10], Set.of());
        assertEquals(decodeAsked, decodeRecorder.shown.size(), "decode profile asked");
        assertEquals(decodeLearnt, String.join(",", decodeRecorder.picked));
        assertEquals(prefillLearnt, String.join(",", prefillRecorder.picked));
    }

    @Test
    void aLocalPrefillTeachesTheDecodeProfileAlone() {
        List<WorkerView> p = List.of(PairSchedulerTest.cached("p1", WorkerRole.PREFILL, 0));
        List<WorkerView> d = List.of(PairSchedulerTest.cached("d1", WorkerRole.DECODE, 0));
        Recorder prefillRecorder = new Recorder();
        Recorder decodeRecorder = new Recorder();
        PairScheduler scheduler =
                scheduler(p, d, prefillRecorder, decodeRecorder, hashes -> Map.of("d1", hashes.length), 256);
        PairScheduler.Choice c = scheduler.choose(null, null, PairSchedulerTest.prompt(1), Set.of());
        assertEquals("d1+d1 local", c.prefillWorker() + "+" + c.decodeWorker() + (c.local() ? " local" : ""));
        assertEquals(List.of("d1"), decodeRecorder.picked);
        assertEquals(List.of(), prefillRecorder.shown);
        assertEquals(List.of(), prefillRecorder.picked);
    }
}
