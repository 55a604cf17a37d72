package dev.tandem;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shape of the code, checked on the compiled main classes: packages form no cycle, the composition
 * root is the only place that knows everything, the wire and the math stay free of the layers above,
 * scheduling plugins stay pure, and no source file outgrows what a reader takes in at once.
 */
class ArchitectureTest {
    /** Lines one main source file may have. */
    static final int MAX_LINES = 400;

    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.tandem");
    }

    @Test
    void packagesFormNoCycle() {
        slices().matching("dev.tandem.(**)").should().beFreeOfCycles().check(main);
    }

    static Stream<ArchRule> layers() {
        return Stream.concat(
                Stream.of(
                                independent(
                                        "dev.tandem.engine.reference..",
                                        "dev.tandem.engine.sim..",
                                        "engines are alternatives"),
                                independent(
                                        "dev.tandem.worker.engine..",
                                        "dev.tandem.worker.upstream..",
                                        "a worker runs an engine in process or fronts one over HTTP, not both"))
                        .flatMap(Stream::of),
                Stream.of(
                        noClasses()
                                .that()
                                .resideOutsideOfPackages("dev.tandem", "dev.tandem.node..", "dev.tandem.bench")
                                .should()
                                .dependOnClassesThat()
                                .resideInAPackage("dev.tandem.node..")
                                .because(
                                        "node/ is the composition root: it wires everything, and nothing builds on it but the"
                                                + " CLI and its benchmarks (which start nodes)"),
                        noClasses()
                                .that()
                                .resideOutsideOfPackages("dev.tandem", "dev.tandem.bench..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAPackage("dev.tandem.bench..")
                                .because("the benchmarks are tools on top of Tandem; Tandem itself never needs them"),
                        noClasses()
                                .that()
                                .resideInAPackage("dev.tandem.protocol..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage(
                                        "dev.tandem.engine..",
                                        "dev.tandem.router..",
                                        "dev.tandem.worker..",
                                        "dev.tandem.cluster..",
                                        "dev.tandem.api..",
                                        "dev.tandem.bridge..",
                                        "dev.tandem.metrics..",
                                        "dev.tandem.config..")
                                .because(
                                        "wire records are the language every process speaks: they carry no engine or router types"),
                        noClasses()
                                .that()
                                .resideInAPackage("dev.tandem.engine..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage(
                                        "dev.tandem.protocol..",
                                        "dev.tandem.router..",
                                        "dev.tandem.worker..",
                                        "dev.tandem.cluster..",
                                        "dev.tandem.api..",
                                        "dev.tandem.bridge..",
                                        "dev.tandem.metrics..",
                                        "dev.tandem.config..",
                                        "io.vertx..",
                                        "com.hazelcast..")
                                .because("the engine is the math: it knows nothing of the cluster it serves"),
                        noClasses()
                                .that()
                                .resideInAPackage("dev.tandem.router.scheduling..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage(
                                        "io.vertx.core",
                                        "io.vertx.core.eventbus..",
                                        "com.hazelcast..",
                                        "io.micrometer..",
                                        "dev.tandem.cluster..",
                                        "dev.tandem.metrics..")
                                .because("scheduling plugins are pure: a snapshot in, a choice out"),
                        noClasses()
                                .that()
                                .resideInAPackage("dev.tandem.router.scaling..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage(
                                        "io.vertx..",
                                        "com.hazelcast..",
                                        "io.micrometer..",
                                        "dev.tandem.cluster..",
                                        "dev.tandem.metrics..")
                                .because("scaling advice is pure: a snapshot in, a recommendation out, no clock"),
                        noClasses()
                                .that()
                                .resideInAnyPackage("dev.tandem.metrics..", "dev.tandem.cluster..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage(
                                        "dev.tandem.router..",
                                        "dev.tandem.worker..",
                                        "dev.tandem.api..",
                                        "dev.tandem.bridge..")
                                .because("meters and shared state are below the roles that use them"),
                        noClasses()
                                .that()
                                .resideInAnyPackage("dev.tandem.tracing..", "dev.tandem.logging..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage(
                                        "dev.tandem.router..",
                                        "dev.tandem.worker..",
                                        "dev.tandem.api..",
                                        "dev.tandem.bridge..",
                                        "dev.tandem.cluster..",
                                        "dev.tandem.engine..")
                                .because("tracing and logging serve every role and know none of them"),
                        noClasses()
                                .that()
                                .resideInAnyPackage("dev.tandem.router..", "dev.tandem.worker..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage("dev.tandem.api..", "dev.tandem.bridge..")
                                .because(
                                        "the router core and the workers do not know which API or bridge a request came through"),
                        noClasses()
                                .that()
                                .resideOutsideOfPackages(
                                        "dev.tandem.node..",
                                        "dev.tandem.bench..",
                                        "dev.tandem.engine.reference..",
                                        "dev.tandem.engine.gguf..",
                                        "dev.tandem.engine.sim..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage("dev.tandem.engine.reference..", "dev.tandem.engine.sim..")
                                .because("node/ chooses the engine (Engines); everything else sees only the Engine"
                                        + " interface (engine/gguf is a model format of the reference engine)"),
                        selfContained(
                                "dev.tandem.engine.tokenizer",
                                "tokenizers turn text into tokens and back; engines, routers and workers build on"
                                        + " them, not the other way round"),
                        noClasses()
                                .that()
                                .resideInAPackage("dev.tandem.engine")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage("dev.tandem.engine.reference..", "dev.tandem.engine.sim..")
                                .because("the engine interface and its shared parts know no implementation"),
                        selfContained(
                                "dev.tandem.config",
                                "configuration is read first and knows nothing of what it configures"),
                        noClasses()
                                .that()
                                .resideInAPackage("dev.tandem.security..")
                                .should()
                                .dependOnClassesThat(JavaClass.Predicates.resideInAPackage("dev.tandem..")
                                        .and(JavaClass.Predicates.resideOutsideOfPackages(
                                                "dev.tandem.security..", "dev.tandem.config..")))
                                .because("security guards the surfaces from below: TLS, limits and signatures"
                                        + " know their configuration and nothing of the surfaces they guard"),
                        noClasses()
                                .that()
                                .resideInAPackage("dev.tandem.upstream..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage(
                                        "dev.tandem.engine",
                                        "dev.tandem.engine.reference..",
                                        "dev.tandem.engine.sim..",
                                        "dev.tandem.router..",
                                        "dev.tandem.worker..",
                                        "dev.tandem.cluster..",
                                        "dev.tandem.api..",
                                        "dev.tandem.bridge..",
                                        "dev.tandem.metrics..")
                                .because(
                                        "upstream/ speaks to vLLM and SGLang: their wire, the config and the tokenizers,"
                                                + " nothing of the roles that use it"),
                        noClasses()
                                .that()
                                .resideInAnyPackage("dev.tandem.worker", "dev.tandem.worker.kv..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage("dev.tandem.worker.engine..", "dev.tandem.worker.upstream..")
                                .because("the workers' shared parts and the KV transfer serve both kinds of worker"),
                        noClasses()
                                .that()
                                .resideInAPackage("dev.tandem.worker.engine..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAPackage("dev.tandem.upstream..")
                                .because("a worker that runs an engine in process speaks to no GPU server"),
                        noClasses()
                                .that()
                                .resideInAPackage("dev.tandem.bridge..")
                                .should()
                                .dependOnClassesThat()
                                .resideInAPackage("dev.tandem.api.http..")
                                .because("bridges share the OpenAI request model (api), not the HTTP server")));
    }

    /** A package (with its sub-packages) that depends on no other Tandem package. */
    private static ArchRule selfContained(String pkg, String why) {
        return noClasses()
                .that()
                .resideInAPackage(pkg + "..")
                .should()
                .dependOnClassesThat(JavaClass.Predicates.resideInAPackage("dev.tandem..")
                        .and(JavaClass.Predicates.resideOutsideOfPackage(pkg + "..")))
                .because(why);
    }

    /** Two packages of which neither may depend on the other. */
    private static ArchRule[] independent(String a, String b, String why) {
        return new ArchRule[] {
            noClasses()
                    .that()
                    .resideInAPackage(a)
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage(b)
                    .because(why),
            noClasses()
                    .that()
                    .resideInAPackage(b)
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage(a)
                    .because(why)
        };
    }

    @ParameterizedTest
    @MethodSource("layers")
    void layersDependDownwardOnly(ArchRule rule) {
        rule.check(main);
    }

    @Test
    void noMainSourceFileIsOver400Lines() throws IOException {
        List<String> tooLong;
        try (Stream<Path> files = Files.walk(Path.of("src", "main", "java"))) {
            tooLong = files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> lines(p) > MAX_LINES)
                    .map(p -> p + " (" + lines(p) + " lines)")
                    .toList();
        }
        assertEquals(List.of(), tooLong, "split these by responsibility");
    }

    private static long lines(Path file) {
        try (Stream<String> lines = Files.lines(file)) {
            return lines.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
