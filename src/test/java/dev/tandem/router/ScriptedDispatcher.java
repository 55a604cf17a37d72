package dev.tandem.router;

import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.WorkerFailure;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link Dispatcher} that records what the router says to workers and lets the test answer: each
 * PREFILL_REQUEST and DECODE_REQUEST waits until the test completes it, as a worker (or its absence)
 * would. A confirmed decode cancel is confirmed at once unless the test holds confirmations back.
 */
final class ScriptedDispatcher implements Dispatcher {

    /** A message awaiting the worker's answer. */
    static final class Call<R, A> {
        final String worker;
        final R message;
        final Promise<A> answer = Promise.promise();

        Call(String worker, R message) {
            this.worker = worker;
            this.message = message;
        }

        void fail(WorkerFailure failure) {
            answer.fail(new ReplyException(
                    ReplyFailure.RECIPIENT_FAILURE,
                    failure.code(),
                    failure.name().toLowerCase()));
        }

        /** Nobody answered in time (a hung or dead worker). */
        void timeOut() {
            answer.fail(new ReplyException(ReplyFailure.TIMEOUT, -1, "timed out"));
        }
    }

    /** A cancel as a worker received it. */
    record Cancel(String worker, boolean prefill, CancelRequest request) {}

    final List<Call<PrefillRequest, PrefillDone>> prefills = new ArrayList<>();
    final List<Call<DecodeRequest, Void>> decodeStarts = new ArrayList<>();
    final List<Cancel> cancels = new ArrayList<>();
    final List<Promise<Void>> heldConfirmations = new ArrayList<>();
    boolean holdConfirmations;

    @Override
    public Future<PrefillDone> prefill(String prefillWorker, PrefillRequest request) {
        Call<PrefillRequest, PrefillDone> call = new Call<>(prefillWorker, request);
        prefills.add(call);
        return call.answer.future();
    }

    @Override
    public Future<Void> startDecode(String decodeWorker, DecodeRequest request) {
        Call<DecodeRequest, Void> call = new Call<>(decodeWorker, request);
        decodeStarts.add(call);
        return call.answer.future();
    }

    @Override
    public void cancelPrefill(String prefillWorker, CancelRequest cancel) {
        cancels.add(new Cancel(prefillWorker, true, cancel));
    }

    @Override
    public void cancelDecode(String decodeWorker, CancelRequest cancel) {
        cancels.add(new Cancel(decodeWorker, false, cancel));
    }

    @Override
    public Future<Void> cancelDecodeConfirmed(String decodeWorker, CancelRequest cancel) {
        cancels.add(new Cancel(decodeWorker, false, cancel));
        Promise<Void> confirmed = Promise.promise();
        if (holdConfirmations) {
            heldConfirmations.add(confirmed);
        } else {
            confirmed.complete();
        }
        return confirmed.future();
    }

    /** The {@code n}th PREFILL_REQUEST (1-based). */
    Call<PrefillRequest, PrefillDone> prefill(int n) {
        return prefills.get(n - 1);
    }

    Call<DecodeRequest, Void> decodeStart(int n) {
        return decodeStarts.get(n - 1);
    }

    /** Answers the {@code n}th prefill with PREFILL_DONE carrying {@code firstToken}. */
    void prefillDone(int n, int firstToken) {
        Call<PrefillRequest, PrefillDone> call = prefill(n);
        PrefillRequest r = call.message;
        call.answer.complete(new PrefillDone(r.requestId(), firstToken, r.promptTokens().length, 1024, 10));
    }

    /** The cancels a worker received, as "worker:reason[:attempt]". */
    List<String> cancelsTo(String worker) {
        List<String> out = new ArrayList<>();
        for (Cancel c : cancels) {
            if (c.worker().equals(worker)) {
                out.add(c.request().reason()
                        + (c.request().attempt() > 0 ? ":" + c.request().attempt() : ""));
            }
        }
        return out;
    }
}
