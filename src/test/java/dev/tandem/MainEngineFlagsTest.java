package dev.tandem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.config.ConfigException;
import dev.tandem.config.ModelSettings;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --engine openai --upstream URL --upstream-protocol P} set the model section a worker starts with. */
class MainEngineFlagsTest {

    private static ModelSettings model(String... args) {
        Main.CommonOptions options = new Main.CommonOptions();
        new CommandLine(options).parseArgs(args);
        options.config = Path.of("conf", "tandem.yaml");
        return options.load().model();
    }

    @Test
    void engineOpenaiFrontsTheUpstreamItNames() {
        ModelSettings m =
                model("--engine", "openai", "--upstream", "http://127.0.0.1:8000", "--upstream-protocol", "sglang");
        assertTrue(m.openai());
        assertEquals("http://127.0.0.1:8000", m.upstream().url());
        assertTrue(m.upstream().sglang());
        assertEquals(
                "vllm", model("--upstream", "http://10.0.0.7:8000").upstream().protocol());
    }

    @Test
    void engineOpenaiWithoutAnUpstreamIsRefused() {
        ConfigException e = assertThrows(ConfigException.class, () -> model("--engine", "openai"));
        assertTrue(e.getMessage().contains("--upstream"), e.getMessage());
        assertThrows(ConfigException.class, () -> model("--upstream", "http://x:1", "--upstream-protocol", "tgi"));
    }
}
