package dev.tandem.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.TestNodes;
import dev.tandem.config.KvEventsSettings;
import dev.tandem.upstream.kvevents.EngineKvBatch;
import dev.tandem.upstream.kvevents.ZmqKvEventSubscriber;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** How the subscriber fills a gap when the engine's replay endpoint does not answer every request. */
class ZmqKvEventSubscriberTest {
    private final List<Long> applied = new CopyOnWriteArrayList<>();
    private final List<String> resets = new CopyOnWriteArrayList<>();
    private final Random random = new Random(7);
    private FakeKvEventPublisher engine;
    private ZmqKvEventSubscriber subscriber;

    @BeforeEach
    void start() {
        engine = new FakeKvEventPublisher(FakeKvEventPublisher.Encoding.MAP, 16);
        subscriber = follow(engine, "test", applied, resets);
        // Batch 0, live or from the replay a new subscriber asks for: the stream is followed from here.
        engine.prefill(prompt());
        TestNodes.awaitTrue(() -> applied.contains(0L), "the first batch");
    }

    @AfterEach
    void stop() throws Exception {
        subscriber.close();
        engine.close();
    }

    @Test
    void aReplayRequestLeftUnansweredIsSentAgain() throws Exception {
        engine.ignoreReplayRequests(1);
        engine.withholdNext(1);
        engine.prefill(prompt()); // 1, withheld
        engine.prefill(prompt()); // 2
        engine.flush();
        TestNodes.awaitTrue(() -> applied.contains(2L), "batch 2");
        assertEquals(List.of(0L, 1L, 2L), applied, "the withheld batch came from the second request, in order");
        assertEquals(1, subscriber.gaps());
        assertEquals(List.of(), resets);
    }

    @Test
    void aGapTheEngineNeverAnswersForResetsAndFollowingGoesOn() throws Exception {
        engine.ignoreReplayRequests(Integer.MAX_VALUE);
        engine.withholdNext(1);
        engine.prefill(prompt()); // 1, withheld
        engine.prefill(prompt()); // 2
        engine.flush();
        TestNodes.awaitTrue(() -> applied.contains(2L), "batch 2");
        assertEquals(List.of(0L, 2L), applied);
        assertEquals(1, resets.size(), resets.toString());
        assertTrue(resets.get(0).contains("could not be replayed"), resets.get(0));
    }

    @Test
    void aFirstBatchLostWhileTheSubscriptionWasOnItsWayIsStillApplied() throws Exception {
        List<Long> seen = new CopyOnWriteArrayList<>();
        try (FakeKvEventPublisher quiet = new FakeKvEventPublisher(FakeKvEventPublisher.Encoding.MAP, 16);
                ZmqKvEventSubscriber late = follow(quiet, "late", seen, new CopyOnWriteArrayList<>())) {
            // The subscriber asked for the (empty) buffer on connecting; batch 0 then never reaches it live,
            // as PUB drops it when the subscription has not arrived yet, and nothing follows to show the gap.
            TestNodes.awaitTrue(() -> quiet.replayRequests() >= 1, "the replay asked for on connecting");
            quiet.withholdNext(1);
            quiet.prefill(prompt());
            quiet.flush();
            TestNodes.awaitTrue(() -> seen.contains(0L), "batch 0, from the buffer");
            assertEquals(List.of(0L), seen);
        }
    }

    /** A started subscriber of {@code engine} that records applied batches' numbers and resets' reasons. */
    private static ZmqKvEventSubscriber follow(
            FakeKvEventPublisher engine, String name, List<Long> applied, List<String> resets) {
        return new ZmqKvEventSubscriber(
                        new KvEventsSettings(engine.endpoint, engine.replayEndpoint, ""),
                        name,
                        new ZmqKvEventSubscriber.Listener() {
                            @Override
                            public void onBatch(EngineKvBatch batch) {
                                applied.add(batch.seq());
                            }

                            @Override
                            public void onReset(String why) {
                                resets.add(why);
                            }
                        })
                .start();
    }

    private int[] prompt() {
        int[] ids = new int[64];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = random.nextInt(1000);
        }
        return ids;
    }
}
