package dev.tandem.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.engine.tokenizer.ByteTokenizer;
import dev.tandem.engine.tokenizer.ChatTemplate;
import dev.tandem.engine.tokenizer.TestTokenizers;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.protocol.ModelCard;
import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerLoad;
import dev.tandem.protocol.WorkerRole;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The served models follow the registry: learned when a worker of a model appears and the router can
 * tokenize for it (its own model, or a tokenizer from the store), dropped when the last worker leaves;
 * a request's {@code model} picks among them with the outcomes the APIs turn into 400, 404 and 503.
 */
class ModelCatalogTest {
    private static final String BYTE_ID = "sha256:00000000000000b1";
    private static final String LLAMA_ID = "sha256:00000000000000c2";
    private static final ServedModel BUILTIN =
            new ServedModel("tandem-builtin", 11, 512, ByteTokenizer.INSTANCE, ChatTemplate.ROLE_TAGS);

    private final List<WorkerDescriptor> registry = new ArrayList<>();
    private final Map<String, Tokenizer> store = new HashMap<>();
    private final List<String> fetched = new ArrayList<>();
    private final List<Promise<Tokenizer>> pending = new ArrayList<>();
    private final List<String> dropped = new ArrayList<>();
    private boolean holdFetches;
    private final ModelCatalog catalog = new ModelCatalog(
            () -> List.copyOf(registry), this::fetch, List.of(new ModelCatalog.Local(BUILTIN, BYTE_ID)));

    {
        catalog.onDropped(m -> dropped.add(m.name()));
    }

    private Future<Tokenizer> fetch(String identity) {
        fetched.add(identity);
        if (holdFetches) {
            Promise<Tokenizer> p = Promise.promise();
            pending.add(p);
            return p.future();
        }
        return Future.succeededFuture(store.get(identity));
    }

    private static WorkerDescriptor worker(String id, WorkerRole role, String model, long fp, ModelCard card) {
        return new WorkerDescriptor(id, role, model, fp, "node", 8, false, WorkerLoad.IDLE, null, card);
    }

    private static ModelCard llamaCard() {
        return new ModelCard(256, LLAMA_ID, "llama2");
    }

    private void addStories() {
        registry.add(worker("sp", WorkerRole.PREFILL, "stories", 22, llamaCard()));
        registry.add(worker("sd", WorkerRole.DECODE, "stories", 22, llamaCard()));
    }

    private void addBuiltin() {
        registry.add(worker("bp", WorkerRole.PREFILL, "tandem-builtin", 11, new ModelCard(512, BYTE_ID, "role-tags")));
        registry.add(worker("bd", WorkerRole.DECODE, "tandem-builtin", 11, null));
    }

    @Test
    void theRoutersOwnModelIsServedOnceItsWorkersRegister() {
        assertTrue(catalog.served().isEmpty());
        addBuiltin();
        catalog.refresh();
        assertSame(BUILTIN, catalog.pick(null).model());
        assertEquals(List.of(BUILTIN), catalog.listed());
        assertTrue(fetched.isEmpty(), "its tokenizer is the router's own: " + fetched);
    }

    @Test
    void aModelOfAnotherTokenizerIsLearnedFromTheStoreWithItsCard() {
        Tokenizer llama = TestTokenizers.llama2c();
        store.put(LLAMA_ID, llama);
        addStories();
        catalog.refresh();
        ServedModel stories = catalog.pick("stories").model();
        assertEquals("stories", stories.name());
        assertEquals(22, stories.fingerprint());
        assertEquals(256, stories.contextLength());
        assertSame(llama, stories.tokenizer());
        assertSame(ChatTemplate.LLAMA2, stories.chatTemplate());
        assertEquals(List.of(LLAMA_ID), fetched);
        // A second model of that vocabulary needs no second fetch.
        registry.add(worker("tp", WorkerRole.PREFILL, "tales", 33, llamaCard()));
        catalog.refresh();
        assertSame(llama, catalog.pick("tales").model().tokenizer());
        assertEquals(1, fetched.size());
    }

    @Test
    void aTokenizerBeyondTheShareIsNotKeptUntilAModelLeavesAndTheLeaverTakesItsTokenizer() {
        Tokenizer llama = TestTokenizers.llama2c();
        String otherId = "sha256:00000000000000d3";
        store.put(LLAMA_ID, llama);
        store.put(otherId, TestTokenizers.llama2c());
        ModelCatalog bounded = new ModelCatalog(
                () -> List.copyOf(registry),
                this::fetch,
                List.of(new ModelCatalog.Local(BUILTIN, BYTE_ID)),
                llama.footprintBytes() + 1);
        addStories();
        registry.add(worker("tp", WorkerRole.PREFILL, "tales", 44, new ModelCard(256, otherId, "llama2")));
        bounded.refresh();
        assertEquals("stories", bounded.pick("stories").model().name());
        assertEquals(llama.footprintBytes(), bounded.fetchedTokenizerBytes());
        assertEquals(ServedModels.Miss.UNAVAILABLE, bounded.pick("tales").miss());
        assertTrue(
                bounded.pick("tales").message().contains("memory budget"),
                bounded.pick("tales").message());
        bounded.refresh();
        assertEquals(2, fetched.size(), "a tokenizer turned away for room is not fetched again meanwhile");
        registry.removeIf(w -> w.model().equals("stories"));
        bounded.refresh();
        bounded.refresh();
        assertEquals("tales", bounded.pick("tales").model().name(), "the room stories left serves tales");
        assertEquals(ServedModels.Miss.UNAVAILABLE, bounded.pick("stories").miss());
    }

    @Test
    void aLlama2cTokenizersFootprintGrowsWithItsVocabulary() {
        long footprint = TestTokenizers.llama2c().footprintBytes();
        int vocab = TestTokenizers.llama2c().vocabSize();
        assertTrue(footprint > 100L * vocab && footprint < 400L * vocab, footprint + " bytes for " + vocab + " tokens");
    }

    @Test
    void whileTheTokenizerIsOnItsWayTheModelIsUnavailableNotUnknown() {
        holdFetches = true;
        addStories();
        catalog.refresh();
        catalog.refresh();
        assertEquals(1, pending.size(), "one fetch at a time per model");
        assertEquals(ServedModels.Miss.UNAVAILABLE, catalog.pick("stories").miss());
        pending.get(0).complete(TestTokenizers.llama2c());
        assertEquals("stories", catalog.pick("stories").model().name());
    }

    @Test
    void aTokenizerNobodyFiledLeavesTheModelUnservedAndIsAskedForAgain() {
        addStories();
        catalog.refresh();
        assertEquals(ServedModels.Miss.UNAVAILABLE, catalog.pick("stories").miss());
        assertTrue(
                catalog.pick("stories").message().contains(LLAMA_ID),
                catalog.pick("stories").message());
        store.put(LLAMA_ID, TestTokenizers.llama2c());
        catalog.refresh();
        assertEquals("stories", catalog.pick("stories").model().name());
        assertEquals(2, fetched.size());
    }

    @Test
    void aWorkerWithoutACardIsServedOnlyUnderAModelTheRouterLoaded() {
        // An external worker of the built-in model with weights of its own (the Python toy model).
        registry.add(worker("py-p", WorkerRole.PREFILL, "tandem-builtin", 99, null));
        registry.add(worker("py-d", WorkerRole.DECODE, "tandem-builtin", 99, null));
        registry.add(worker("x", WorkerRole.PREFILL, "mystery", 5, null));
        catalog.refresh();
        ServedModel py = catalog.pick("tandem-builtin").model();
        assertEquals(99, py.fingerprint());
        assertSame(ByteTokenizer.INSTANCE, py.tokenizer());
        assertEquals(ServedModels.Miss.UNAVAILABLE, catalog.pick("mystery").miss());
        assertEquals(List.of("tandem-builtin"), names(catalog.listed()));
    }

    @Test
    void theLastWorkerLeavingDropsTheModelAndItsNameAnswersUnavailable() {
        store.put(LLAMA_ID, TestTokenizers.llama2c());
        addStories();
        addBuiltin();
        catalog.refresh();
        assertEquals(List.of("stories", "tandem-builtin"), names(catalog.listed()));
        registry.removeIf(w -> w.workerId().equals("sd"));
        catalog.refresh();
        assertEquals(List.of("tandem-builtin"), names(catalog.listed()), "no decode worker: not listed");
        assertEquals("stories", catalog.pick("stories").model().name(), "still served: the scheduler says 503");
        registry.removeIf(w -> w.workerId().equals("sp"));
        catalog.refresh();
        assertEquals(List.of("stories"), dropped);
        assertEquals(ServedModels.Miss.UNAVAILABLE, catalog.pick("stories").miss());
        assertSame(BUILTIN, catalog.pick(null).model(), "one model left: it is the default again");
    }

    @Test
    void newWeightsUnderTheNameReplaceTheModelOnceTheOldOnesAreGone() {
        store.put(LLAMA_ID, TestTokenizers.llama2c());
        addStories();
        catalog.refresh();
        registry.clear();
        registry.add(worker("sp2", WorkerRole.PREFILL, "stories", 23, llamaCard()));
        catalog.refresh();
        assertEquals(List.of("stories"), dropped);
        assertEquals(23, catalog.pick("stories").model().fingerprint());
    }

    static Stream<Arguments> picks() {
        return Stream.of(
                Arguments.of(null, null, "stories and tandem-builtin: say which", ServedModels.Miss.REQUIRED),
                Arguments.of("stories", "stories", "named", null),
                Arguments.of("tandem-builtin", "tandem-builtin", "named", null),
                Arguments.of("gpt-4o", null, "never served", ServedModels.Miss.NOT_FOUND),
                Arguments.of("Stories", null, "names are exact", ServedModels.Miss.NOT_FOUND));
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("picks")
    void aRequestPicksAmongSeveralModels(String requested, String expected, String why, ServedModels.Miss miss) {
        store.put(LLAMA_ID, TestTokenizers.llama2c());
        addStories();
        addBuiltin();
        catalog.refresh();
        ServedModels.Pick pick = catalog.pick(requested);
        if (expected == null) {
            assertNull(pick.model(), why);
            assertEquals(miss, pick.miss(), why);
            assertTrue(pick.message() != null && !pick.message().isBlank(), why);
        } else {
            assertEquals(expected, pick.model().name(), why);
        }
    }

    @Test
    void withNoWorkersAtAllTheRoutersOwnModelIsTheDefault() {
        assertSame(BUILTIN, catalog.pick(null).model());
        assertSame(BUILTIN, catalog.pick("tandem-builtin").model());
        assertEquals(ServedModels.Miss.NOT_FOUND, catalog.pick("stories").miss());
        ModelCatalog bare = new ModelCatalog(List::of, id -> Future.succeededFuture(), List.of());
        assertEquals(ServedModels.Miss.UNAVAILABLE, bare.pick(null).miss());
    }

    @Test
    void anUnknownChatTemplateKeepsTheModelOut() {
        store.put(LLAMA_ID, TestTokenizers.llama2c());
        registry.add(worker("zp", WorkerRole.PREFILL, "zephyr", 44, new ModelCard(256, LLAMA_ID, "zephyr")));
        catalog.refresh();
        assertEquals(ServedModels.Miss.UNAVAILABLE, catalog.pick("zephyr").miss());
        assertTrue(
                catalog.pick("zephyr").message().contains("zephyr"),
                catalog.pick("zephyr").message());
    }

    @Test
    void aCardWithTheModelsOwnTemplateSourceServesChatsRenderedWithIt() {
        store.put(LLAMA_ID, TestTokenizers.llama2c());
        registry.add(worker(
                "zp",
                WorkerRole.PREFILL,
                "zephyr",
                44,
                new ModelCard(
                        256,
                        LLAMA_ID,
                        "zephyr",
                        "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{{ eos_token }}{% endfor %}",
                        java.util.Map.of("bos_token", "<s>", "eos_token", "</s>"))));
        catalog.refresh();
        ServedModel zephyr = catalog.pick("zephyr").model();
        assertEquals(
                "<s><|user|>hi</s>",
                zephyr.chatTemplate().render(List.of(new dev.tandem.engine.tokenizer.ChatMessage("user", "hi"))));
    }

    @Test
    void aCardNamingTheUpstreamsTemplateNeedsAServerTokenizer() {
        store.put(LLAMA_ID, TestTokenizers.llama2c());
        registry.add(worker("up", WorkerRole.PREFILL, "served", 45, new ModelCard(256, LLAMA_ID, "upstream")));
        catalog.refresh();
        // A llama2.c vocabulary cannot ask a server: the model stays out rather than rendering wrongly.
        assertEquals(ServedModels.Miss.UNAVAILABLE, catalog.pick("served").miss());
    }

    private static List<String> names(List<ServedModel> models) {
        return models.stream().map(ServedModel::name).toList();
    }
}
