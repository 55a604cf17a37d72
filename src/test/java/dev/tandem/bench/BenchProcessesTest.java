package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The JVMs a bench starts run with this JVM's options and code. */
class BenchProcessesTest {

    @Test
    void childrenShareModuleFlagsCollectorAndPropertiesButNotAgents() {
        List<String> parent = List.of(
                "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
                "--add-modules=jdk.incubator.vector",
                "-XX:+UseZGC",
                "-Xmx2g",
                "-Dio.netty.tryReflectionSetAccessible=true",
                "-agentpath:/tmp/ap/libasyncProfiler.so=start,file=/tmp/out.txt",
                "-agentlib:jdwp=transport=dt_socket,server=y,address=5005",
                "-javaagent:/tmp/agent.jar",
                "-Xrunjdwp:transport=dt_socket");
        assertEquals(
                List.of(
                        "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
                        "--add-modules=jdk.incubator.vector",
                        "-XX:+UseZGC",
                        "-Xmx2g",
                        "-Dio.netty.tryReflectionSetAccessible=true"),
                BenchProcesses.inheritedOptions(parent));
    }

    @Test
    void theShadedJarIsRunAsAJarSoItsManifestOpensApply() {
        assertEquals(List.of("-jar", "target/tandem.jar"), BenchProcesses.launch("target/tandem.jar"));
    }

    @Test
    void aClassPathRunsTheMainClass() {
        String classPath = "target/classes" + File.pathSeparator + "lib/vertx-core.jar";
        assertEquals(List.of("-cp", classPath, "dev.tandem.Main"), BenchProcesses.launch(classPath));
        assertEquals(List.of("-cp", "target/classes", "dev.tandem.Main"), BenchProcesses.launch("target/classes"));
    }

    @Test
    void theCommandIsJavaThenOptionsThenCodeThenArguments() {
        List<String> command = BenchProcesses.tandem(List.of("bench", "kv-peer"));
        assertEquals(List.of("bench", "kv-peer"), command.subList(command.size() - 2, command.size()));
        assertEquals(true, command.get(0).endsWith("java"), command.get(0));
        int code = command.indexOf("dev.tandem.Main") >= 0 ? command.indexOf("-cp") : command.indexOf("-jar");
        assertEquals(
                BenchProcesses.inheritedOptions(java.lang.management.ManagementFactory.getRuntimeMXBean()
                        .getInputArguments()),
                command.subList(1, code));
    }
}
