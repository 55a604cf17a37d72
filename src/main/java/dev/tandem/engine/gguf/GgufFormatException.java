package dev.tandem.engine.gguf;

/** A file that is not a GGUF this reader can use, or metadata a model needs that is missing or mistyped. */
public final class GgufFormatException extends RuntimeException {
    public GgufFormatException(String message) {
        super(message);
    }

    public GgufFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
