package dev.tandem.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.engine.Engine;
import dev.tandem.engine.ForwardingEngine;
import dev.tandem.engine.ModelInfo;
import dev.tandem.engine.reference.ReferenceEngine;
import dev.tandem.protocol.WorkerRole;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A model's name says which weights a request gets: a worker whose model has the name of a registered
 * one but other weights (another fingerprint) is refused at registration, with a line saying why; the
 * registered one is untouched, and a worker of the same weights still joins.
 */
class ModelNameConflictTest {
    private final List<TandemNode> nodes = new ArrayList<>();

    @AfterEach
    void close() {
        nodes.forEach(n -> n.close().await());
    }

    /** The built-in model's name on other weights: what a second checkpoint named alike would be. */
    private static Engine impostor(Engine real) {
        return new ForwardingEngine(real) {
            @Override
            public ModelInfo info() {
                ModelInfo i = real.info();
                return new ModelInfo(i.name(), i.config(), i.fingerprint() ^ 0x5A5A5A5AL);
            }
        };
    }

    @Test
    void theLaterWorkerOfAnotherModelUnderTheSameNameIsRefused() {
        TandemConfig config = TestNodes.config();
        Engine builtin = ReferenceEngine.builtin(config.worker().kvBlockSize());
        TandemNode router = TandemNode.start(config, new TandemNode.Plan(true, List.of(), List.of()));
        nodes.add(router);
        nodes.add(TandemNode.start(config, new TandemNode.Plan(false, List.of("prefill-a"), List.of()), builtin));
        TestNodes.awaitWorkers(router.router(), 1, 0);

        RuntimeException refused = assertThrows(
                RuntimeException.class,
                () -> nodes.add(TandemNode.start(
                        config, new TandemNode.Plan(false, List.of("prefill-b"), List.of()), impostor(builtin))));
        String why = messages(refused);
        assertTrue(why.contains("prefill-b refused") && why.contains("already served by worker prefill-a"), why);

        nodes.add(TandemNode.start(config, new TandemNode.Plan(false, List.of("prefill-c"), List.of()), builtin));
        TestNodes.awaitWorkers(router.router(), 2, 0);
        assertEquals(
                List.of("prefill-a", "prefill-c"),
                router.router().directory().workers(WorkerRole.PREFILL).stream()
                        .map(w -> w.workerId())
                        .sorted()
                        .toList());
    }

    private static String messages(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c.getMessage()).append(" | ");
        }
        return sb.toString();
    }
}
