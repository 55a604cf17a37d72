package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.tandem.config.RouterSettings;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.protocol.WorkerView;
import dev.tandem.router.scheduling.SchedulingObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each model is scheduled among its own workers, with turns of its own: requests of two models
 * interleaved still take their model's workers in turn, and a pair never spans models.
 */
class ModelSchedulersTest {
    private static final ServedModel A = model("a", 1);
    private static final ServedModel B = model("b", 2);

    private static ServedModel model(String name, long fingerprint) {
        return new ServedModel(name, fingerprint, 512, ByteTokenizer.INSTANCE, ChatTemplate.ROLE_TAGS);
    }

    private static final List<WorkerView> WORKERS = new ArrayList<>();

    static {
        for (ServedModel m : List.of(A, B)) {
            for (WorkerRole role : WorkerRole.values()) {
                for (int i = 1; i <= 2; i++) {
                    String id = m.name() + "-" + role.wireName() + "-" + i;
                    WORKERS.add(new WorkerView(
                            new WorkerDescriptor(id, role, m.name(), m.fingerprint(), "n", 4, false, WorkerLoad.IDLE),
                            0));
                }
            }
        }
    }

    static Stream<String> policies() {
        return Stream.of("round-robin", "seed", "least-loaded", "default", "cache-aware");
    }

    @ParameterizedTest
    @MethodSource("policies")
    void interleavedModelsTakeTheirOwnWorkersInTurn(String policy) {
        RouterSettings settings =
                TestSettings.withPolicy(TandemConfig.defaults().router(), policy);
        ModelSchedulers schedulers = new ModelSchedulers(m -> PairScheduler.forSettings(
                settings,
                role -> WORKERS.stream()
                        .filter(w -> w.worker().role() == role && m.servedBy(w.worker()))
                        .toList(),
                SchedulingObserver.NONE,
                PrefixLookup.NONE));
        List<String> aDecodes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            for (ServedModel m : List.of(A, B)) {
                PairScheduler.Choice c = schedulers.choose(m, null, null, new int[] {256, 1, 2, 3}, Set.of());
                assertEquals(m.name(), c.prefillWorker().substring(0, 1), policy + ": " + c);
                assertEquals(m.name(), c.decodeWorker().substring(0, 1), policy + ": " + c);
                if (m == A) {
                    aDecodes.add(c.decodeWorker());
                }
            }
        }
        if (policy.equals("round-robin") || policy.equals("seed")) {
            // A shared turn counter would hand model a every other turn: always the same worker.
            assertEquals(List.of("a-decode-1", "a-decode-2", "a-decode-1", "a-decode-2"), aDecodes);
        }
    }

    @ParameterizedTest
    @MethodSource("policies")
    void aModelNoLongerServedLeavesWithItsScheduler(String policy) {
        List<ServedModel> made = new ArrayList<>();
        ModelSchedulers schedulers = new ModelSchedulers(m -> {
            made.add(m);
            return PairScheduler.forSettings(
                    TestSettings.withPolicy(TandemConfig.defaults().router(), policy),
                    role -> List.of(),
                    SchedulingObserver.NONE,
                    PrefixLookup.NONE);
        });
        PairScheduler first = schedulers.of(A);
        assertSame(first, schedulers.of(A));
        schedulers.forgetModel(A);
        assertNotSame(first, schedulers.of(A));
        assertEquals(List.of(A, A), made);
    }
}
