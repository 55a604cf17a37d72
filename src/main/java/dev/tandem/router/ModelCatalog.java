package dev.tandem.router;

import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.JinjaChatTemplate;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.engine.tokenizer.UpstreamChatTemplate;
import dev.tandem.engine.tokenizer.UpstreamTokenizer;
import dev.tandem.protocol.ModelCard;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * The models a router serves, learned from the registry: a model is served from the moment a worker of
 * it registers and this router can tokenize for it, and dropped when its last worker leaves. The
 * tokenizer comes from the models the router loaded itself ({@code --model}, the built-in one), else
 * from the cluster's tokenizer store under the identity the worker's {@link ModelCard} names. A worker
 * without a card (one joined over the worker bridge) is served only under the name of a model the
 * router loaded, whose tokenizer it was admitted to share.
 *
 * <p>A name stands for one set of weights: workers registered under a served model's name with another
 * fingerprint take no part in it (the registry refuses them anyway). {@link #refresh} runs on the
 * router's loop; the readers ({@link ServedModels}) may run anywhere.
 *
 * <p>Tokenizers fetched from the store draw from the router's share of the memory budget: one that would
 * take the fetched tokenizers past it is not kept (its model not served, the reason logged and given to
 * its requests) until a model leaves, and a model that leaves takes its tokenizer with it.
 */
public final class ModelCatalog implements ServedModels {
    private static final Logger LOG = Logger.getLogger(ModelCatalog.class.getName());
    /** How many departed model names are remembered, to answer 503 rather than 404 for them. */
    private static final int DEPARTED_NAMES = 256;

    /** A model the router loaded itself, and its tokenizer's identity (so workers of other models may share it). */
    public record Local(ServedModel model, String tokenizerIdentity) {}

    private final Supplier<List<WorkerDescriptor>> registry;
    private final Function<String, Future<Tokenizer>> tokenizerStore;
    private final List<ServedModel> local = new ArrayList<>();
    /** Tokenizers by identity: the loaded models' and every one fetched from the store so far. */
    private final Map<String, Tokenizer> tokenizers = new ConcurrentHashMap<>();
    /** The footprint of each tokenizer fetched from the store (the loaded models' are not counted). */
    private final Map<String, Long> fetched = new ConcurrentHashMap<>();

    private final long tokenizerBytes;
    /** Tokenizers turned away for lack of room: not fetched again until a model leaves and frees some. */
    private final Set<String> noRoom = ConcurrentHashMap.newKeySet();

    private final Map<String, ServedModel> served = new ConcurrentHashMap<>();
    private final Set<String> loading = ConcurrentHashMap.newKeySet();
    private final Map<String, Boolean> departed = Collections.synchronizedMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > DEPARTED_NAMES;
        }
    });
    /** What was last said about a model that cannot be served, so each reason is logged once. */
    private final Map<String, String> warned = new ConcurrentHashMap<>();

    private final List<Consumer<ServedModel>> dropListeners = new CopyOnWriteArrayList<>();

    /**
     * @param registry       every registered worker (a snapshot per call)
     * @param tokenizerStore the tokenizer filed under an identity (null when nobody filed it); may block
     *                       nobody: it completes later, on the router's loop
     */
    public ModelCatalog(
            Supplier<List<WorkerDescriptor>> registry,
            Function<String, Future<Tokenizer>> tokenizerStore,
            List<Local> loaded) {
        this(registry, tokenizerStore, loaded, Long.MAX_VALUE);
    }

    /** @param tokenizerBytes the most heap the tokenizers fetched from the store may hold together */
    public ModelCatalog(
            Supplier<List<WorkerDescriptor>> registry,
            Function<String, Future<Tokenizer>> tokenizerStore,
            List<Local> loaded,
            long tokenizerBytes) {
        this.tokenizerBytes = tokenizerBytes;
        this.registry = registry;
        this.tokenizerStore = tokenizerStore;
        for (Local l : loaded) {
            local.add(l.model());
            tokenizers.put(l.tokenizerIdentity(), l.model().tokenizer());
        }
    }

    /** Called (on the router's loop) with every model that stops being served. */
    public void onDropped(Consumer<ServedModel> listener) {
        dropListeners.add(listener);
    }

    /** Brings the served models in line with the registry. Loop only. */
    public void refresh() {
        Map<String, List<WorkerDescriptor>> byName = new TreeMap<>();
        for (WorkerDescriptor w : registry.get()) {
            byName.computeIfAbsent(w.model(), k -> new ArrayList<>()).add(w);
        }
        for (ServedModel m : List.copyOf(served.values())) {
            List<WorkerDescriptor> workers = byName.getOrDefault(m.name(), List.of());
            if (workers.stream().noneMatch(m::servedBy)) {
                served.remove(m.name());
                departed.put(m.name(), Boolean.TRUE);
                LOG.info("model '" + m.name() + "' is no longer served: none of its workers is registered");
                dropListeners.forEach(l -> l.accept(m));
                releaseUnusedTokenizers();
            }
        }
        byName.forEach((name, workers) -> {
            if (!served.containsKey(name) && !loading.contains(name)) {
                learn(name, workers);
            }
        });
    }

    private void learn(String name, List<WorkerDescriptor> workers) {
        // One fingerprint per name: the registry refuses a second; should two race in, the lowest id wins.
        WorkerDescriptor first = workers.stream()
                .min(Comparator.comparing(WorkerDescriptor::workerId))
                .orElseThrow();
        long fingerprint = first.modelFingerprint();
        ModelCard card = workers.stream()
                .filter(w -> w.modelFingerprint() == fingerprint && w.card() != null)
                .map(WorkerDescriptor::card)
                .findFirst()
                .orElse(null);
        for (ServedModel m : local) {
            if (m.servedBy(first)) {
                serve(m);
                return;
            }
            if (card == null && m.name().equals(name)) {
                // A worker from outside (the worker bridge) says no more than the name: it was admitted
                // because it tokenizes as this router's model of that name, with weights of its own.
                serve(new ServedModel(name, fingerprint, m.contextLength(), m.tokenizer(), m.chatTemplate()));
                return;
            }
        }
        if (card == null) {
            warnOnce(
                    name,
                    "workers of model '" + name + "' announce no model card and this router has not loaded"
                            + " that model: start the router with --model for it");
            return;
        }
        boolean onServer = UpstreamChatTemplate.NAME.equals(card.chatTemplate());
        ChatTemplate template = card.chatTemplateSource() != null
                ? new JinjaChatTemplate(card.chatTemplate(), card.chatTemplateSource(), card.specialTokens())
                : ChatTemplate.named(card.chatTemplate());
        if (template == null && !onServer) {
            warnOnce(
                    name,
                    "model '" + name + "' uses the chat template '" + card.chatTemplate()
                            + "', which this router does not know");
            return;
        }
        Tokenizer known = tokenizers.get(card.tokenizer());
        if (known != null) {
            if (onServer) {
                // The upstream applies its own template: chats go to it through the model's tokenizer.
                if (!(known instanceof UpstreamTokenizer t)) {
                    warnOnce(name, "model '" + name + "' renders chats on its server but has no server tokenizer");
                    return;
                }
                template = new UpstreamChatTemplate(t);
            }
            serve(new ServedModel(name, fingerprint, card.contextLength(), known, template));
            return;
        }
        if (noRoom.contains(card.tokenizer())) {
            return;
        }
        loading.add(name);
        tokenizerStore.apply(card.tokenizer()).onComplete(ar -> {
            loading.remove(name);
            if (ar.succeeded() && ar.result() != null) {
                if (!keep(name, card.tokenizer(), ar.result())) {
                    return;
                }
                // The registry may have moved on while the tokenizer came: look again.
                refresh();
            } else {
                warnOnce(
                        name,
                        "no tokenizer " + card.tokenizer() + " for model '" + name + "' in the cluster"
                                + (ar.failed() ? ": " + ar.cause().getMessage() : "") + "; will try again");
            }
        });
    }

    /** Keeps a fetched tokenizer if it fits the share left; else says why its model is not served. */
    private boolean keep(String name, String identity, Tokenizer tokenizer) {
        long footprint = tokenizer.footprintBytes();
        long held = fetched.values().stream().mapToLong(Long::longValue).sum();
        if (held + footprint > tokenizerBytes) {
            warnOnce(
                    name,
                    "the tokenizer of model '" + name + "' takes " + footprint + " bytes and the tokenizers this"
                            + " router holds " + held + " of their " + tokenizerBytes + "-byte share of the memory"
                            + " budget; not served until another model leaves");
            noRoom.add(identity);
            return false;
        }
        fetched.put(identity, footprint);
        tokenizers.put(identity, tokenizer);
        return true;
    }

    /** Fetched tokenizers no served model uses any more are dropped: the store has them should one return. */
    private void releaseUnusedTokenizers() {
        for (String identity : List.copyOf(fetched.keySet())) {
            Tokenizer t = tokenizers.get(identity);
            if (served.values().stream().noneMatch(m -> m.tokenizer() == t)) {
                tokenizers.remove(identity);
                fetched.remove(identity);
                noRoom.clear();
            }
        }
    }

    /** Heap held by the tokenizers fetched from the store. */
    public long fetchedTokenizerBytes() {
        return fetched.values().stream().mapToLong(Long::longValue).sum();
    }

    private void serve(ServedModel m) {
        served.put(m.name(), m);
        departed.remove(m.name());
        warned.remove(m.name());
        LOG.info("serving model '" + m.name() + "' (fingerprint " + Long.toHexString(m.fingerprint()) + ", context "
                + m.contextLength() + ", chat template " + m.chatTemplate().name() + ")");
    }

    private void warnOnce(String name, String message) {
        if (!message.equals(warned.put(name, message))) {
            LOG.warning(message);
        }
    }

    @Override
    public Pick pick(String requested) {
        if (requested == null) {
            List<ServedModel> all = List.copyOf(served.values());
            if (all.size() == 1) {
                return Pick.of(all.get(0));
            }
            if (all.isEmpty() && local.size() == 1) {
                // No worker yet: the router's own model, so the caller hears which workers are missing.
                return Pick.of(local.get(0));
            }
            if (all.isEmpty()) {
                return Pick.missing(Miss.UNAVAILABLE, "No model is served yet: no worker has registered");
            }
            return Pick.missing(
                    Miss.REQUIRED,
                    "This server serves several models (" + String.join(", ", names(all))
                            + "): say which one in 'model'");
        }
        // Served now, or the router's own model without workers yet (the scheduler then says which are missing).
        ServedModel m = known(requested);
        if (m != null) {
            return Pick.of(m);
        }
        if (loading.contains(requested)
                || registry.get().stream().anyMatch(w -> w.model().equals(requested))) {
            String why = warned.get(requested);
            return Pick.missing(
                    Miss.UNAVAILABLE,
                    "The model '" + requested + "' is registered but not ready on this router"
                            + (why != null ? ": " + why : "; try again shortly"));
        }
        if (departed.containsKey(requested)) {
            return Pick.missing(
                    Miss.UNAVAILABLE, "The model '" + requested + "' has no workers at the moment; try again later");
        }
        List<String> names = names(served.values());
        return Pick.missing(
                Miss.NOT_FOUND,
                "The model '" + requested + "' does not exist"
                        + (names.isEmpty() ? "" : "; this server serves " + String.join(", ", names)));
    }

    @Override
    public List<ServedModel> listed() {
        List<WorkerDescriptor> workers = registry.get();
        List<ServedModel> out = new ArrayList<>();
        for (ServedModel m : served.values()) {
            boolean prefill = workers.stream().anyMatch(w -> w.role() == WorkerRole.PREFILL && m.servedBy(w));
            boolean decode = workers.stream().anyMatch(w -> w.role() == WorkerRole.DECODE && m.servedBy(w));
            if (prefill && decode) {
                out.add(m);
            }
        }
        out.sort(Comparator.comparing(ServedModel::name));
        return out;
    }

    @Override
    public ServedModel known(String name) {
        ServedModel m = served.get(name);
        if (m != null) {
            return m;
        }
        return local.stream().filter(l -> l.name().equals(name)).findFirst().orElse(null);
    }

    /** Every model served now, by name (those with workers, whether or not both roles are there). */
    public List<ServedModel> served() {
        List<ServedModel> out = new ArrayList<>(served.values());
        out.sort(Comparator.comparing(ServedModel::name));
        return out;
    }

    private static List<String> names(java.util.Collection<ServedModel> models) {
        return models.stream().map(ServedModel::name).sorted().toList();
    }
}
