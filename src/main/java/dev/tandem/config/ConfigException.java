package dev.tandem.config;

/** A configuration value that is missing, mistyped, out of range or unknown; the message names the key. */
public class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(message);
    }
}
