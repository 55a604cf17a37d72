package dev.tandem.engine.gguf;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * llama.cpp as an oracle: {@code src/test/node/llama-oracle.mjs} (node-llama-cpp's prebuilt CPU build)
 * answers one JSON request about a GGUF file. Needs the Node suite's packages ({@code .ci/run}
 * installs them); a missing install fails the test with the command that fixes it.
 */
public final class LlamaCpp {
    static final Path NODE_DIR = Path.of("src/test/node").toAbsolutePath();
    private static final long TIMEOUT_SECONDS = 300;

    private LlamaCpp() {}

    public static JsonObject ask(JsonObject request) throws IOException, InterruptedException {
        if (!Files.isDirectory(NODE_DIR.resolve("node_modules/@node-llama-cpp/linux-x64"))) {
            throw new IllegalStateException("llama.cpp is not installed for the tests: run (cd src/test/node && "
                    + "NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --omit=optional)");
        }
        Process p = new ProcessBuilder("node", "llama-oracle.mjs")
                .directory(NODE_DIR.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            p.getOutputStream().write(request.encode().getBytes(StandardCharsets.UTF_8));
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException(
                        "llama-oracle.mjs failed (exit " + (p.isAlive() ? "timeout" : p.exitValue()) + ")");
            }
            return new JsonObject(new String(out, StandardCharsets.UTF_8).trim());
        } finally {
            p.destroyForcibly();
        }
    }

    public static int[] ints(JsonArray a) {
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.getInteger(i);
        }
        return out;
    }

    public static JsonArray array(int[] values) {
        JsonArray a = new JsonArray();
        for (int v : values) {
            a.add(v);
        }
        return a;
    }
}
