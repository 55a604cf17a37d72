package dev.tandem.router;

import dev.tandem.engine.Tokenizer;
import java.util.HashSet;
import java.util.Set;

/**
 * One request in flight on a router: what was asked, where its output goes, which workers serve it
 * now, and what it holds (load, timer). Touched only on the router's event loop.
 */
final class ActiveRequest implements DisaggRouter.Handle {
  final GenerationRequest request;
  final TokenSink sink;
  final RequestStream stream;
  final long startNanos = System.nanoTime();
  private final Runnable onCancel;
  long id = -1;
  String prefillWorker;
  String decodeWorker;
  String affinityWorker;
  /** True while this router counts the request against its prefill worker. */
  boolean prefillLoadHeld;
  /** True once the current decode worker holds the request (DECODE_REQUEST sent). */
  boolean decoding;
  /** Generated tokens that came before the current dispatch: the decode worker's seq 1 is this + 1. */
  int seqOffset;
  /** Dispatches so far (first one included); replies from an older dispatch are stale. */
  int attempt;
  /** Between a move and the next dispatch: replies of the attempt being left are stale. */
  boolean moving;
  /** Workers that failed this request; a retry or failover avoids them. */
  final Set<String> failedWorkers = new HashSet<>();
  /** Workers that refused this request for lack of room (their queue or KV memory was full). */
  final Set<String> refusedForCapacity = new HashSet<>();
  /** True once the stream moved to another decode worker after tokens had been sent. */
  boolean failedOver;
  /** When the last token reached the router (0 before the first): time to first token and between tokens. */
  long lastTokenNanos;
  long firstTokenNanos;
  /** When the current decode worker last showed progress (decode started, or a token came). */
  long lastProgressNanos;
  long timerId = -1;
  boolean ended;

  ActiveRequest(GenerationRequest request, TokenSink sink, Tokenizer tokenizer, Runnable onCancel) {
    this.request = request;
    this.sink = sink;
    int[] prompt = request.promptTokens();
    this.stream = new RequestStream(tokenizer, prompt[prompt.length - 1], request.stopStrings(), sink);
    this.onCancel = onCancel;
  }

  @Override
  public void cancel() {
    onCancel.run();
  }

  /**
   * True when running out of workers is overload (429, retry later) rather than an outage: nothing was
   * streamed yet, and every worker this request gave up on had turned it away for lack of room.
   */
  boolean onlyRefusedForCapacity() {
    return stream.delivered() == 0 && !refusedForCapacity.isEmpty() && refusedForCapacity.containsAll(failedWorkers);
  }

  /** The prompt a (re-)prefill computes: the original prompt followed by every token already delivered. */
  int[] resumePrompt() {
    int[] prompt = request.promptTokens();
    int[] done = stream.deliveredTokens();
    int[] all = java.util.Arrays.copyOf(prompt, prompt.length + done.length);
    System.arraycopy(done, 0, all, prompt.length, done.length);
    return all;
  }

  /** The request's log line: id, outcome, workers, attempts, sizes, time to first token, duration. */
  String summary(String outcome) {
    String ttft = firstTokenNanos == 0 ? "-" : Long.toString((firstTokenNanos - startNanos) / 1_000_000);
    return String.format("request %d %s: prefill %s, decode %s, attempts %d, prompt %d tokens, generated %d,"
            + " ttft %s ms, %d ms", id, outcome, prefillWorker, decodeWorker, attempt, request.promptTokens().length,
        stream.delivered(), ttft, (System.nanoTime() - startNanos) / 1_000_000);
  }
}
