package dev.tandem.worker.engine;

import dev.tandem.TestNodes;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import dev.tandem.node.TandemNode;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.Sampling;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;

/**
 * One prefill and one decode worker on a node without a router, for tests that speak to the workers'
 * own addresses: prompts go straight to the prefill worker, which ships their KV to the decode worker.
 */
final class WorkerPairNode implements AutoCloseable {
    static final String PREFILL = "prefill-p";
    static final String DECODE = "decode-p";

    final TandemNode node;

    private WorkerPairNode(TandemNode node) {
        this.node = node;
    }

    /** A pair on the test model, paced like an accelerator (see {@link dev.tandem.engine.PacedEngine}). */
    static WorkerPairNode startPaced(long decodeStepMicros, long prefillMicrosPerToken) {
        TandemConfig config = TestNodes.config();
        config = config.withModel(TestSettings.withPacing(config.model(), decodeStepMicros, prefillMicrosPerToken));
        TandemNode node = TandemNode.start(config, new TandemNode.Plan(false, List.of(PREFILL), List.of(DECODE)));
        TestNodes.awaitTrue(
                () -> !node.prefillWorkers().isEmpty() && !node.decodeWorkers().isEmpty(),
                Duration.ofSeconds(30),
                "workers started");
        return new WorkerPairNode(node);
    }

    /** PREFILL_REQUEST for {@code prompt}, its KV bound for the decode worker; the answer once acknowledged. */
    Future<PrefillDone> prefill(long requestId, int[] prompt) {
        PrefillRequest request = new PrefillRequest(requestId, prompt, DECODE, Sampling.GREEDY, "node-test");
        return node.vertx()
                .eventBus()
                .<JsonObject>request(
                        Addresses.prefill(PREFILL),
                        PrefillRequest.CODEC.encode(request),
                        new DeliveryOptions().setSendTimeout(30_000))
                .map(reply -> PrefillDone.CODEC.decode(reply.body()));
    }

    @Override
    public void close() {
        node.close().await();
    }
}
