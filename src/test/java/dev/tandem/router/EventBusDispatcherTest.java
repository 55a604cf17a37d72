package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.ProtocolException;
import dev.tandem.protocol.Sampling;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The router's messages to workers on a (local) event bus: each has its own deadline, answers are
 * decoded into their records, and a confirmed cancel never fails.
 */
class EventBusDispatcherTest {
    private static final PrefillRequest PREFILL =
            new PrefillRequest(7, new int[] {256, 104, 105}, "d1", Sampling.GREEDY, "node-a", 1);
    private static final DecodeRequest DECODE =
            new DecodeRequest(7, 65, 4, Sampling.GREEDY, new int[0], "router-a", "node-a", 1);

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() {
        vertx.close().await();
    }

    private static <T> Throwable failureOf(Future<T> future) throws Exception {
        try {
            future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    void theDecodeStartHasItsOwnDeadlineNotThePrefillOne() throws Exception {
        vertx.eventBus()
                .consumer(Addresses.decodeStart("d1"), m -> {})
                .completion()
                .await();
        Dispatcher dispatcher = new EventBusDispatcher(vertx.eventBus(), 60_000, 200);
        Throwable failure = failureOf(dispatcher.startDecode("d1", DECODE));
        assertEquals(
                ReplyFailure.TIMEOUT,
                assertInstanceOf(ReplyException.class, failure).failureType());
    }

    @Test
    void thePrefillHasItsDeadline() throws Exception {
        vertx.eventBus().consumer(Addresses.prefill("p1"), m -> {}).completion().await();
        Dispatcher dispatcher = new EventBusDispatcher(vertx.eventBus(), 200, 60_000);
        Throwable failure = failureOf(dispatcher.prefill("p1", PREFILL));
        assertEquals(
                ReplyFailure.TIMEOUT,
                assertInstanceOf(ReplyException.class, failure).failureType());
    }

    @Test
    void prefillDoneIsDecodedAndAMalformedOneFails() throws Exception {
        PrefillDone done = new PrefillDone(7, 65, 3, 4096, 100);
        vertx.eventBus()
                .<JsonObject>consumer(Addresses.prefill("p1"), m -> m.reply(PrefillDone.CODEC.encode(done)))
                .completion()
                .await();
        vertx.eventBus()
                .<JsonObject>consumer(Addresses.prefill("p2"), m -> m.reply(new JsonObject()))
                .completion()
                .await();
        Dispatcher dispatcher = new EventBusDispatcher(vertx.eventBus(), 5_000, 5_000);
        assertEquals(
                done,
                dispatcher
                        .prefill("p1", PREFILL)
                        .toCompletionStage()
                        .toCompletableFuture()
                        .get(10, TimeUnit.SECONDS));
        assertInstanceOf(ProtocolException.class, failureOf(dispatcher.prefill("p2", PREFILL)));
    }

    @Test
    void cancelsReachTheirAddressesAndAConfirmedCancelNeverFails() throws Exception {
        CompletableFuture<JsonObject> prefillCancel = new CompletableFuture<>();
        vertx.eventBus()
                .<JsonObject>consumer(Addresses.prefillCancel("p1"), m -> prefillCancel.complete(m.body()))
                .completion()
                .await();
        vertx.eventBus()
                .consumer(Addresses.decodeCancel("d-silent"), m -> {})
                .completion()
                .await();
        Dispatcher dispatcher = new EventBusDispatcher(vertx.eventBus(), 5_000, 5_000);
        CancelRequest cancel = new CancelRequest(7, "moved", 2);
        dispatcher.cancelPrefill("p1", cancel);
        assertEquals(cancel, CancelRequest.CODEC.decode(prefillCancel.get(10, TimeUnit.SECONDS)));
        assertNull(failureOf(dispatcher.cancelDecodeConfirmed("d-nobody", cancel)), "no such worker: go on");
        assertNull(failureOf(dispatcher.cancelDecodeConfirmed("d-silent", cancel)), "no answer in time: go on");
    }
}
