package dev.tandem.worker.upstream;

import dev.tandem.protocol.Addresses;
import dev.tandem.protocol.KvHandle;
import dev.tandem.protocol.PrefillDone;
import dev.tandem.protocol.PrefillRequest;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerFailure;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import dev.tandem.upstream.UpstreamClient;
import dev.tandem.upstream.UpstreamFlow;
import dev.tandem.upstream.UpstreamLoad;
import dev.tandem.worker.CancelMessages;
import dev.tandem.worker.WorkerMessages;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A prefill worker of engine {@code openai}: runs the prefill phase on its upstream GPU server (vLLM or
 * SGLang in prefill mode, {@link UpstreamFlow}) and hands the decode worker what its own upstream needs
 * to fetch the KV ({@link KvHandle}); the KV itself moves between the GPU servers. PREFILL_DONE carries
 * no first token: the decode stream makes it.
 */
public final class UpstreamPrefillVerticle extends UpstreamWorkerBase {

    private static final class Job {
        final PrefillRequest request;
        final UpstreamClient.Cancel cancel = new UpstreamClient.Cancel();
        boolean cancelled;

        Job(PrefillRequest request) {
            this.request = request;
        }
    }

    private final Map<Long, Job> jobs = new HashMap<>();
    private final PromptStats promptStats = new PromptStats();

    public UpstreamPrefillVerticle(String workerId, UpstreamWorkerSetup setup) {
        super(workerId, setup);
    }

    @Override
    List<MessageConsumer<?>> roleConsumers(EventBus bus) {
        return List.of(
                bus.<Object>consumer(Addresses.prefill(workerId), this::onPrefill),
                bus.<Object>consumer(Addresses.prefillCancel(workerId), this::onCancel));
    }

    @Override
    void cancelAll() {
        jobs.values().forEach(j -> j.cancel.cancel());
    }

    /** This worker as it is now; an unhealthy upstream shows as draining, so routers send nothing new. */
    @Override
    public WorkerDescriptor descriptor() {
        return descriptor(
                WorkerRole.PREFILL, settings.prefillConcurrency(), WorkerLoad.prefill(queuedTokens(), jobs.size()));
    }

    /**
     * Prompt tokens ahead of a new one: this worker's own, or what the upstream's queue stands for (its
     * running and waiting requests at the mean prompt this worker sees), whichever is more — the
     * upstream's count includes this worker's requests, and may serve other clients too.
     */
    private int queuedTokens() {
        long own = 0;
        for (Job job : jobs.values()) {
            own += job.request.promptTokens().length;
        }
        UpstreamLoad load = monitor.load();
        long upstreamQueue = (long) (load.running() + load.waiting()) * promptStats.meanPromptTokens();
        return (int) Math.min(Integer.MAX_VALUE, Math.max(own, upstreamQueue));
    }

    /** Drains before a shutdown: no new prompts, waits (up to the timeout) for those it holds. */
    public Future<Void> drainForShutdown(long timeoutMs) {
        return drain(jobs::isEmpty, timeoutMs);
    }

    /** A router on a cluster member that left will never read the answer: stop the upstream's work. */
    public void onRouterNodeLeft(String nodeId) {
        context.runOnContext(v -> {
            for (Job job : jobs.values()) {
                if (nodeId.equals(job.request.routerNode())) {
                    job.cancelled = true;
                    job.cancel.cancel();
                }
            }
        });
    }

    private void onPrefill(Message<Object> message) {
        PrefillRequest request = WorkerMessages.decodeOrFail(message, PrefillRequest.CODEC);
        if (request == null) {
            return;
        }
        if (jobs.containsKey(request.requestId())) {
            message.fail(WorkerFailure.BAD_REQUEST.code(), "request " + request.requestId() + " is already prefilling");
            return;
        }
        if (!monitor.healthy()) {
            message.fail(WorkerFailure.GONE.code(), "the upstream " + client.baseUrl() + " is unhealthy");
            return;
        }
        promptStats.record(request.promptTokens().length);
        Job job = new Job(request);
        jobs.put(request.requestId(), job);
        long start = System.nanoTime();
        flow.prefill(client, model.name(), request, job.cancel, params -> handOver(request, params))
                .onComplete(ar -> {
                    jobs.remove(request.requestId());
                    if (job.cancelled) {
                        WorkerMessages.failCancelled(message, request.requestId());
                    } else if (ar.succeeded()) {
                        message.reply(PrefillDone.CODEC.encode(new PrefillDone(
                                request.requestId(),
                                PrefillDone.NO_FIRST_TOKEN,
                                request.promptTokens().length,
                                0,
                                (System.nanoTime() - start) / 1000,
                                ar.result())));
                    } else {
                        UpstreamFailures.reply(message, "prefill", ar.cause());
                    }
                });
    }

    private Future<Void> handOver(PrefillRequest r, JsonObject params) {
        KvHandle handle = new KvHandle(r.requestId(), r.attempt(), r.promptTokens(), params);
        return vertx.eventBus()
                .request(
                        Addresses.decodeKvHandle(r.decodeWorkerId()),
                        KvHandle.CODEC.encode(handle),
                        new DeliveryOptions().setSendTimeout(upstream.timeoutMs()))
                .mapEmpty();
    }

    private void onCancel(Message<Object> message) {
        CancelMessages.decode(message).map(c -> jobs.get(c.requestId())).ifPresent(job -> {
            job.cancelled = true;
            job.cancel.cancel();
        });
    }
}
