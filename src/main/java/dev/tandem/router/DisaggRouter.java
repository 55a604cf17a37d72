package dev.tandem.router;

import dev.tandem.cluster.AffinityStore;
import dev.tandem.cluster.RequestIdSource;
import dev.tandem.engine.StopCondition;
import dev.tandem.engine.Tokenizer;
import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.DecodeRequest;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.TokenBatch;
import dev.tandem.protocol.TokenEvent;
import dev.tandem.config.RouterSettings;
import dev.tandem.metrics.RouterMetrics;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One request's life, from scheduling to the last token: picks a decode then a prefill worker, has
 * the prefill worker compute and ship the KV, starts decode, feeds tokens to the request's sink, and
 * on every ending — done, error, cancel, timeout — releases load, clears timers and tells the workers.
 *
 * <p>A worker that fails or disappears is replaced: before the first token the request is simply
 * dispatched again; after it, the prompt plus every token already sent is re-prefilled on another
 * pair and the stream continues at the next sequence number — with a fixed seed the output is the one
 * an undisturbed run gives. Runs on the router verticle's event loop.
 */
public final class DisaggRouter {
  private static final Logger LOG = Logger.getLogger(DisaggRouter.class.getName());
  /** Dispatches one request may take (the first plus retries and failovers) before it fails. */
  static final int MAX_ATTEMPTS = 4;
  /** How long a moved request waits for its old decode worker to confirm the cancel before going on anyway. */
  static final long CANCEL_ACK_TIMEOUT_MS = 1000;

  /** The caller's handle on a submitted request. */
  public interface Handle {
    /** The client went away: stop the request on its workers and free everything it holds. */
    void cancel();
  }

  private final Vertx vertx;
  private final Context context;
  private final String routerId;
  private final String routerNode;
  private final Tokenizer tokenizer;
  private final int contextLength;
  private final AffinityStore affinity;
  private final RequestIdSource ids;
  private final PairScheduler pairs;
  private final LoadTracker loads;
  private final RouterSettings settings;
  private final RouterMetrics metrics;
  /** Set when the node shuts down: running requests finish, new ones are refused. */
  private boolean stopping;
  /** Requests submitted and not yet ended, including those still waiting for an id. */
  private int inFlight;
  private final Map<Long, ActiveRequest> active = new HashMap<>();

  /**
   * @param routerNode this router's cluster member id: workers drop its work when the member leaves
   * @param loads      this router's per-worker in-flight counts, which {@code pairs} also reads
   */
  public DisaggRouter(Vertx vertx, Context context, String routerId, String routerNode, Tokenizer tokenizer,
                      int contextLength, AffinityStore affinity, RequestIdSource ids, PairScheduler pairs,
                      LoadTracker loads, RouterSettings settings, RouterMetrics metrics) {
    this.vertx = vertx;
    this.context = context;
    this.routerId = routerId;
    this.routerNode = routerNode;
    this.tokenizer = tokenizer;
    this.contextLength = contextLength;
    this.affinity = affinity;
    this.ids = ids;
    this.pairs = pairs;
    this.loads = loads;
    this.settings = settings;
    this.metrics = metrics;
  }

  public Handle submit(GenerationRequest request, TokenSink sink) {
    ActiveRequest[] self = new ActiveRequest[1];
    ActiveRequest a = new ActiveRequest(request, sink, tokenizer,
        () -> context.runOnContext(v -> end(self[0], null, "cancelled")));
    self[0] = a;
    if (stopping) {
      a.ended = true;
      metrics.ended(RouterMetrics.Outcome.REJECTED, 0, 0, 0);
      sink.onError(GenerationFailure.shuttingDown());
      return a;
    }
    if (inFlight >= settings.maxInFlight()) {
      // Refused before anything is taken: nothing to release.
      a.ended = true;
      metrics.ended(RouterMetrics.Outcome.REJECTED, 0, 0, 0);
      sink.onError(GenerationFailure.overloaded(settings.maxInFlight()));
      return a;
    }
    inFlight++;
    // The deadline covers everything, waiting for an id included.
    long timeoutMs = settings.requestTimeoutMs();
    a.timerId = vertx.setTimer(timeoutMs, t -> end(a, GenerationFailure.timeout(timeoutMs), null));
    ids.next().onComplete(ar -> guarded(a, () -> {
      if (a.ended) {
        return;
      }
      if (ar.failed()) {
        end(a, GenerationFailure.upstream("no request id: " + ar.cause().getMessage()), null);
        return;
      }
      a.id = ar.result();
      active.put(a.id, a);
      lookupAffinity(a).onComplete(aff -> guarded(a, () -> {
        a.affinityWorker = aff.succeeded() ? aff.result() : null;
        dispatch(a);
      }));
    }));
    return a;
  }

  /**
   * Runs a step of a request's life; a bug that throws ends the request with a 500 instead of
   * leaving it hanging with its load and timers held.
   */
  private void guarded(ActiveRequest a, Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      LOG.log(Level.SEVERE, "request " + a.id + " failed inside the router", e);
      end(a, new GenerationFailure(500, "server_error", "internal_error", "internal error: " + e), null);
    }
  }

  private Future<String> lookupAffinity(ActiveRequest a) {
    if (a.request.sessionKey() == null) {
      return Future.succeededFuture(null);
    }
    return affinity.lookup(a.request.sessionKey(), context);
  }

  /** Picks a decode and a prefill worker (avoiding those that failed this request) and starts prefill. */
  private void dispatch(ActiveRequest a) {
    if (a.ended) {
      return;
    }
    a.moving = false;
    int attempt = ++a.attempt;
    if (attempt > MAX_ATTEMPTS) {
      end(a, a.onlyRefusedForCapacity() ? GenerationFailure.workersFull("available")
          : GenerationFailure.upstream("gave up after " + MAX_ATTEMPTS + " attempts; workers failed: "
          + a.failedWorkers), null);
      return;
    }
    int[] prompt = a.resumePrompt();
    PairScheduler.Choice choice = pairs.choose(a.request.sessionKey(), a.affinityWorker, prompt.length,
        a.failedWorkers);
    if (choice.missingRole() != null) {
      end(a, a.onlyRefusedForCapacity() ? GenerationFailure.workersFull(choice.missingRole())
          : GenerationFailure.noWorkers(choice.missingRole()), null);
      return;
    }
    if (attempt == 1) {
      metrics.queued(System.nanoTime() - a.startNanos);
      if (a.request.sessionKey() != null) {
        metrics.affinity(choice.decodeWorker().equals(a.affinityWorker));
      }
    } else {
      metrics.retry(a.stream.delivered() > 0);
    }
    a.decodeWorker = choice.decodeWorker();
    a.prefillWorker = choice.prefillWorker();
    a.decoding = false;
    a.seqOffset = a.stream.delivered();
    loads.acquire(a.decodeWorker);
    loads.acquire(a.prefillWorker);
    a.prefillLoadHeld = true;
    LOG.fine(() -> "request " + a.id + " attempt " + attempt + ": prefill " + a.prefillWorker + ", decode "
        + a.decodeWorker + ", " + prompt.length + " tokens");
    if (attempt == 1) {
      a.sink.onAccepted(a.id, a.prefillWorker, a.decodeWorker);
    }
    PrefillRequest request = new PrefillRequest(a.id, prompt, a.decodeWorker, a.request.sampling(), routerNode, attempt);
    vertx.eventBus().<JsonObject>request(Addresses.prefill(a.prefillWorker), PrefillRequest.CODEC.encode(request),
            new DeliveryOptions().setSendTimeout(settings.prefillTimeoutMs()))
        .onComplete(ar -> {
          if (a.ended || attempt != a.attempt || a.moving) {
            return; // a newer dispatch owns the request now, or will
          }
          releasePrefillLoad(a);
          if (ar.succeeded()) {
            guarded(a, () -> onPrefillDone(a, PrefillDone.CODEC.decode(ar.result().body())));
          } else if (WorkerFailures.retryable(ar.cause())) {
            LOG.info(() -> "request " + a.id + ": prefill on " + a.prefillWorker + " failed, retrying: " + ar.cause());
            List<String> avoid = WorkerFailures.toAvoid(ar.cause(), a.prefillWorker, a.decodeWorker);
            if (WorkerFailures.capacity(ar.cause())) {
              a.refusedForCapacity.addAll(avoid);
            }
            replace(a, avoid);
          } else {
            end(a, WorkerFailures.toClient("prefill", ar.cause()), null);
          }
        });
  }

  private void onPrefillDone(ActiveRequest a, PrefillDone done) {
    LOG.fine(() -> "request " + a.id + " prefilled: " + done);
    int first = done.firstToken();
    int index = a.seqOffset;
    StopCondition.Outcome outcome = new StopCondition(tokenizer, a.request.stopTokens(), a.request.maxTokens(),
        a.request.promptTokens().length, contextLength).check(first, index + 1);
    int[] tokens = outcome == StopCondition.Outcome.STOP ? new int[0] : new int[] {first};
    if (outcome.finished()) {
      // Done at this token: the KV parked on the decode worker is not needed; free it now.
      vertx.eventBus().send(Addresses.decodeCancel(a.decodeWorker),
          CancelRequest.CODEC.encode(new CancelRequest(a.id, "finished_at_first_token")));
      onEvent(a, new TokenEvent(a.id, index, tokens, outcome.finishReason(), null));
      return;
    }
    onEvent(a, new TokenEvent(a.id, index, tokens, null, null));
    if (a.ended) {
      return; // a stop string in the first token ended it
    }
    int attempt = a.attempt;
    a.decoding = true;
    a.lastProgressNanos = System.nanoTime();
    DecodeRequest decode = new DecodeRequest(a.id, first, a.request.maxTokens() - index, a.request.sampling(),
        a.request.stopTokens(), routerId, routerNode, attempt);
    vertx.eventBus().<JsonObject>request(Addresses.decodeStart(a.decodeWorker), DecodeRequest.CODEC.encode(decode),
            new DeliveryOptions().setSendTimeout(settings.prefillTimeoutMs()))
        .onComplete(ar -> {
          if (a.ended || attempt != a.attempt || a.moving || ar.succeeded()) {
            return;
          }
          if (WorkerFailures.retryable(ar.cause())) {
            LOG.info(() -> "request " + a.id + ": decode start on " + a.decodeWorker + " failed: " + ar.cause());
            replace(a, List.of(a.decodeWorker));
          } else {
            end(a, WorkerFailures.toClient("decode", ar.cause()), null);
          }
        });
  }

  /** Tokens from a decode worker's step, for any number of this router's requests. */
  public void onTokenBatch(TokenBatch batch) {
    for (TokenEvent e : batch.events()) {
      ActiveRequest a = active.get(e.requestId());
      // Only the request's current decode worker speaks for it; a replaced one may still be talking.
      if (a == null || a.ended || !batch.workerId().equals(a.decodeWorker) || !a.decoding) {
        continue;
      }
      if (e.error() != null) {
        LOG.info(() -> "request " + a.id + ": decode worker " + a.decodeWorker + " failed: " + e.error());
        String failed = a.decodeWorker;
        guarded(a, () -> replace(a, List.of(failed)));
        continue;
      }
      a.lastProgressNanos = System.nanoTime();
      onEvent(a, new TokenEvent(e.requestId(), e.seq() + a.seqOffset, e.tokens(), e.finishReason(), null));
    }
  }

  /**
   * Moves every decoding request whose worker is stuck: the request got nothing for the stall timeout
   * and the worker's decode step count (from its heartbeats) has not moved for as long. A request that
   * only waits for a batch slot on a busy worker stays: that worker's steps go on.
   *
   * @param workerProgressNanos when a worker last reported a new decode step
   */
  public void moveStalled(long nowNanos, java.util.function.ToLongFunction<String> workerProgressNanos) {
    long stallNanos = settings.decodeStallTimeoutMs() * 1_000_000;
    for (ActiveRequest a : List.copyOf(active.values())) {
      if (!a.ended && a.decoding && nowNanos - a.lastProgressNanos > stallNanos
          && nowNanos - workerProgressNanos.applyAsLong(a.decodeWorker) > stallNanos) {
        LOG.info(() -> "request " + a.id + ": no token and no decode step from " + a.decodeWorker + " for "
            + settings.decodeStallTimeoutMs() + " ms, moving it");
        String stalled = a.decodeWorker;
        guarded(a, () -> replace(a, List.of(stalled)));
      }
    }
  }

  /**
   * A worker left the registry (its member died, its heartbeat lapsed, or it withdrew): every request
   * it was serving goes to another worker.
   */
  public void onWorkerGone(String workerId) {
    affinity.forgetWorker(vertx, workerId)
        .onFailure(e -> LOG.log(Level.FINE, "affinity of " + workerId + " not dropped", e));
    for (ActiveRequest a : List.copyOf(active.values())) {
      if (!a.ended && (workerId.equals(a.decodeWorker) || (a.prefillLoadHeld && workerId.equals(a.prefillWorker)))) {
        LOG.info(() -> "request " + a.id + ": worker " + workerId + " is gone, moving the request");
        guarded(a, () -> replace(a, List.of(workerId)));
      }
    }
  }

  /** Gives up the current workers (telling them to drop the request) and dispatches again without {@code failed}. */
  private void replace(ActiveRequest a, List<String> failed) {
    a.failedWorkers.addAll(failed);
    a.failedOver |= a.stream.delivered() > 0;
    // Only the attempt being left: should it arrive late, the next attempt on the same worker is untouched.
    JsonObject cancel = CancelRequest.CODEC.encode(new CancelRequest(a.id, "moved", a.attempt));
    if (a.prefillLoadHeld) {
      // Still prefilling there: stop it, and do not go back (a cancel could overtake a new prefill).
      a.failedWorkers.add(a.prefillWorker);
      vertx.eventBus().send(Addresses.prefillCancel(a.prefillWorker), cancel);
      releasePrefillLoad(a);
    }
    Future<?> cancelled = Future.succeededFuture();
    if (a.decodeWorker != null) {
      // The next pair may have the same decode worker, and a cancel that overtook the new KV or decode
      // start would kill the new attempt: dispatch once the old one is gone there (or it did not answer).
      cancelled = vertx.eventBus().request(Addresses.decodeCancel(a.decodeWorker), cancel,
          new DeliveryOptions().setSendTimeout(CANCEL_ACK_TIMEOUT_MS)).otherwiseEmpty();
      loads.release(a.decodeWorker);
      a.decodeWorker = null;
    }
    a.decoding = false;
    a.moving = true;
    int attempt = a.attempt;
    cancelled.onComplete(v -> {
      if (!a.ended && attempt == a.attempt) {
        guarded(a, () -> dispatch(a));
      }
    });
  }

  private void onEvent(ActiveRequest a, TokenEvent event) {
    if (event.tokens().length > 0) {
      long now = System.nanoTime();
      if (a.lastTokenNanos == 0) {
        a.firstTokenNanos = now;
        metrics.firstToken(now - a.startNanos);
      } else {
        metrics.interToken(now - a.lastTokenNanos);
      }
      a.lastTokenNanos = now;
    }
    boolean ended;
    try {
      ended = a.stream.accept(event);
    } catch (RuntimeException e) {
      guarded(a, () -> {
        throw e;
      });
      return;
    }
    if (ended) {
      if (a.stream.error() != null) {
        end(a, GenerationFailure.upstream(a.stream.error()), null);
      } else {
        end(a, null, null);
      }
    }
  }

  /**
   * The single exit of a request: exactly once, whatever ended it. {@code failure} null and
   * {@code cancelReason} null means it finished normally.
   */
  private void end(ActiveRequest a, GenerationFailure failure, String cancelReason) {
    if (a.ended) {
      return;
    }
    a.ended = true;
    inFlight--;
    logEnd(a, failure, cancelReason);
    metrics.ended(outcome(a, failure, cancelReason), a.request.promptTokens().length, a.stream.delivered(),
        System.nanoTime() - a.startNanos);
    if (a.timerId >= 0) {
      vertx.cancelTimer(a.timerId);
    }
    if (a.id >= 0) {
      active.remove(a.id);
    }
    boolean ok = failure == null && cancelReason == null;
    if (!ok && a.id >= 0) {
      tellWorkers(a, cancelReason != null ? cancelReason : failure.code());
    } else if (a.stream.stoppedByString()) {
      // The decode worker does not know about stop strings; it would generate on for nobody.
      tellWorkers(a, "stop_string");
    }
    releasePrefillLoad(a);
    if (a.decodeWorker != null) {
      loads.release(a.decodeWorker);
    }
    if (ok) {
      // Recorded before the response ends, so the session's next request already finds it.
      recordAffinity(a).onComplete(v -> {
        String tail = a.stream.flushText();
        if (!tail.isEmpty()) {
          a.sink.onTokens(new int[0], tail);
        }
        a.sink.onFinish(a.stream.finishReason(), new Usage(a.request.promptTokens().length, a.stream.delivered()));
      });
    } else if (failure != null) {
      a.sink.onError(failure);
    }
  }

  private static RouterMetrics.Outcome outcome(ActiveRequest a, GenerationFailure failure, String cancelReason) {
    if (cancelReason != null) {
      return RouterMetrics.Outcome.CANCELLED;
    }
    if (failure == null) {
      return a.failedOver ? RouterMetrics.Outcome.FAILED_OVER : RouterMetrics.Outcome.OK;
    }
    if (failure.status() == 504) {
      return RouterMetrics.Outcome.TIMEOUT;
    }
    if (failure.status() == 429) {
      return RouterMetrics.Outcome.REJECTED;
    }
    return failure.status() < 500 ? RouterMetrics.Outcome.CLIENT_ERROR : RouterMetrics.Outcome.ERROR;
  }

  /** One line per request: what an operator greps for. */
  private void logEnd(ActiveRequest a, GenerationFailure failure, String cancelReason) {
    LOG.info(() -> a.summary(failure != null ? "failed " + failure.status() + " " + failure.code()
        : cancelReason != null ? "cancelled (" + cancelReason + ")" : "ok " + a.stream.finishReason()));
  }

  private void releasePrefillLoad(ActiveRequest a) {
    if (a.prefillLoadHeld) {
      a.prefillLoadHeld = false;
      loads.release(a.prefillWorker);
    }
  }

  private Future<Void> recordAffinity(ActiveRequest a) {
    String session = a.request.sessionKey();
    if (session == null || a.decodeWorker == null || a.decodeWorker.equals(a.affinityWorker)) {
      return Future.succeededFuture();
    }
    // Bounded: a slow cluster must not hold a finished response back.
    return affinity.record(session, a.decodeWorker, context)
        .timeout(1, java.util.concurrent.TimeUnit.SECONDS)
        .recover(e -> {
          LOG.log(Level.FINE, "affinity not recorded for request " + a.id, e);
          return Future.succeededFuture();
        });
  }

  private void tellWorkers(ActiveRequest a, String reason) {
    JsonObject cancel = CancelRequest.CODEC.encode(new CancelRequest(a.id, reason));
    if (a.prefillWorker != null) {
      vertx.eventBus().send(Addresses.prefillCancel(a.prefillWorker), cancel);
    }
    if (a.decodeWorker != null) {
      vertx.eventBus().send(Addresses.decodeCancel(a.decodeWorker), cancel);
    }
  }

  /** Requests in flight on this router. */
  public int activeRequests() {
    return active.size();
  }

  /** From now on new requests are refused (503); those running go on. Event loop only. */
  public void stopAdmitting() {
    stopping = true;
  }

  public boolean stopping() {
    return stopping;
  }

  /** Requests admitted and not yet ended (including those still waiting for an id). */
  public int admitted() {
    return inFlight;
  }

  public LoadTracker loads() {
    return loads;
  }
}
