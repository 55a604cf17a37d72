package dev.tandem.protocol;

/** A wire message that does not have the shape its record requires. */
public class ProtocolException extends RuntimeException {
    public ProtocolException(String message) {
        super(message);
    }
}
