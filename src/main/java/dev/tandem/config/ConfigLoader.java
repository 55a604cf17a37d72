package dev.tandem.config;

import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads the YAML configuration file with vertx-config, before the clustered node exists. */
public final class ConfigLoader {
    private ConfigLoader() {}

    /** The file's content as JSON; an absent optional file is an empty configuration. */
    public static JsonObject readYaml(Path file, boolean required) {
        if (!Files.isRegularFile(file)) {
            if (required) {
                throw new ConfigException("configuration file " + file + " does not exist");
            }
            return new JsonObject();
        }
        // A short-lived plain Vertx: the clustered one needs settings from this very file.
        Vertx vertx = Vertx.vertx();
        try {
            ConfigStoreOptions store = new ConfigStoreOptions()
                    .setType("file")
                    .setFormat("yaml")
                    .setConfig(
                            new JsonObject().put("path", file.toAbsolutePath().toString()));
            ConfigRetriever retriever = ConfigRetriever.create(
                    vertx,
                    new ConfigRetrieverOptions()
                            .addStore(store)
                            .setIncludeDefaultStores(false)
                            .setScanPeriod(-1));
            return retriever.getConfig().await();
        } catch (RuntimeException e) {
            throw new ConfigException("cannot read " + file + ": " + e.getMessage());
        } finally {
            vertx.close().await();
        }
    }
}
