package dev.tandem.router;

import dev.tandem.engine.StopCondition;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.tracing.RequestTrace;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * One request on a router: what was asked, where its output goes, its {@link RequestState}, which
 * workers serve it now and which failed it, and its timer. Bookkeeping only — {@link RequestLifecycle}
 * decides what happens. Touched only on the router's loop.
 */
final class ActiveRequest implements RequestRouter.Handle {
    final GenerationRequest request;
    final TokenSink sink;
    final RequestStream stream;
    /** When the first token (PREFILL_DONE's) ends the stream; later ones are the decode worker's to judge. */
    final StopCondition firstTokenStop;

    final long startNanos;
    private final Runnable onCancel;
    private RequestState state = RequestState.ADMITTED;
    long id = -1;
    String affinityWorker;
    /** The current pair; the decode worker is null while moving. */
    String prefillWorker;

    String decodeWorker;
    /** Dispatches so far (the first one included): answers of an older dispatch are stale. */
    int attempt;
    /** Generated tokens that came before the current dispatch: the decode worker's seq 1 is this + 1. */
    int seqOffset;
    /** Workers that failed this request; a retry or failover avoids them. */
    final Set<String> failedWorkers = new LinkedHashSet<>();
    /** Workers that refused this request for lack of room (their queue or KV memory was full). */
    final Set<String> refusedForCapacity = new LinkedHashSet<>();
    /** Prompt tokens whose KV was reused rather than computed (PREFILL_DONE of the first token). */
    int cachedTokens;
    /** KV bytes shipped for it, over every attempt. */
    long kvBytes;
    /** The current attempt's prefill runs on its decode worker: no KV moves. */
    boolean local;
    /** The prompt tokens the current prefill worker counts against its queue while prefilling this. */
    long prefillTokens;
    /** True once the stream moved to another decode worker after tokens had been sent. */
    boolean failedOver;
    /** When the first and the latest token reached the router (0 before the first). */
    long firstTokenNanos;
    /** A decode worker acknowledged a KV of this request (a PREFILL_DONE came). */
    boolean kvLanded;

    long lastTokenNanos;
    /** When the current decode worker last showed progress (decode started, or a token came). */
    long lastProgressNanos;

    long timerId = -1;

    /** Waiting in the router's queue (flow control), since {@code queuedNanos}, until {@code queueTimerId}. */
    boolean queued;

    /** It holds a place of {@code router.max-in-flight} (from admission on, except while it waits in the queue). */
    boolean holdsAdmission = true;

    long queuedNanos;
    long queueTimerId = -1;
    /**
     * Workers its first dispatch avoids: those flow control found without room, and the prefill workers
     * predicted to miss its TTFT target.
     */
    Set<String> avoidFirst = Set.of();
    /** The quota minute it was counted in and the tokens it took there (given back unused at its end). */
    long quotaWindow = -1;

    long quotaTokens;
    /** Its spans, or {@link RequestTrace#OFF} when it is not traced. */
    RequestTrace trace = RequestTrace.OFF;

    ActiveRequest(GenerationRequest request, TokenSink sink, long startNanos, Runnable onCancel) {
        this.request = request;
        this.sink = sink;
        int[] prompt = request.promptTokens();
        Tokenizer tokenizer = request.model().tokenizer();
        int contextLength = request.model().contextLength();
        this.stream = new RequestStream(tokenizer, prompt[prompt.length - 1], request.stopStrings(), sink);
        this.firstTokenStop =
                new StopCondition(tokenizer, request.stopTokens(), request.maxTokens(), prompt.length, contextLength);
        this.startNanos = startNanos;
        this.onCancel = onCancel;
    }

    /**
     * The workers this dispatch avoids: those that failed the request, and on its first dispatch also those
     * flow control found without room or too slow for its TTFT target.
     */
    Set<String> avoiding() {
        if (attempt != 1 || avoidFirst.isEmpty()) {
            return failedWorkers;
        }
        Set<String> avoid = new LinkedHashSet<>(failedWorkers);
        avoid.addAll(avoidFirst);
        return avoid;
    }

    @Override
    public void cancel() {
        onCancel.run();
    }

    @Override
    public int cachedTokens() {
        return cachedTokens;
    }

    RequestState state() {
        return state;
    }

    boolean ended() {
        return state == RequestState.ENDED;
    }

    /** Moves to {@code next}; a transition the state machine does not allow is a bug, and throws. */
    RequestState moveTo(RequestState next) {
        if (!state.canMoveTo(next)) {
            throw new IllegalStateException("request " + id + " cannot go from " + state + " to " + next);
        }
        RequestState left = state;
        state = next;
        return left;
    }

    /**
     * True when running out of workers is overload (429, retry later) rather than an outage: no KV reached
     * a decode worker yet — nothing was streamed, or only first tokens sent ahead of a KV that was turned
     * away — and every worker this request gave up on had turned it away for lack of room.
     */
    boolean onlyRefusedForCapacity() {
        return (stream.delivered() == 0 || !kvLanded)
                && !refusedForCapacity.isEmpty()
                && refusedForCapacity.containsAll(failedWorkers);
    }

    /**
     * While prefilling: the current dispatch's first token already went out (sent ahead of its KV), since
     * the stream has gone past where the dispatch started.
     */
    boolean firstTokenAhead() {
        return stream.delivered() > seqOffset;
    }

    /** The prompt a (re-)prefill computes: the original prompt followed by every token already delivered. */
    int[] resumePrompt() {
        int[] prompt = request.promptTokens();
        int[] done = stream.deliveredTokens();
        int[] all = Arrays.copyOf(prompt, prompt.length + done.length);
        System.arraycopy(done, 0, all, prompt.length, done.length);
        return all;
    }

    /**
     * The request's log line: id, outcome, workers (and whether the prefill ran on the decode worker),
     * attempts, sizes, cached prompt tokens, KV bytes moved, time to first token, duration.
     */
    String summary(String outcome, long nowNanos) {
        String ttft = firstTokenNanos == 0 ? "-" : Long.toString((firstTokenNanos - startNanos) / 1_000_000);
        // Concatenation, not String.format: this runs on the router's loop once per request.
        return "request " + id + " " + outcome + ": model " + request.model().name() + ", prefill " + prefillWorker
                + (local ? " (local)" : "") + ", decode " + decodeWorker + ", attempts " + attempt + ", prompt "
                + request.promptTokens().length + " tokens (cached " + cachedTokens + "), generated "
                + stream.delivered() + ", kv " + kvBytes + " bytes, ttft " + ttft + " ms, "
                + (nowNanos - startNanos) / 1_000_000 + " ms";
    }
}
