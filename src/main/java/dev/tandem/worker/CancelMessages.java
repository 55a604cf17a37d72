package dev.tandem.worker;

import dev.tandem.protocol.CancelRequest;
import dev.tandem.protocol.JsonCodec;
import dev.tandem.protocol.ProtocolException;
import io.vertx.core.eventbus.Message;
import java.util.Optional;
import java.util.logging.Logger;

/** Reads a CANCEL off a worker's cancel address; a malformed one is logged and ignored, as a cancel has no error reply. */
public final class CancelMessages {
    private static final Logger LOG = Logger.getLogger(CancelMessages.class.getName());

    private CancelMessages() {}

    public static Optional<CancelRequest> decode(Message<Object> message) {
        try {
            return Optional.of(CancelRequest.CODEC.decode(JsonCodec.object(message.body())));
        } catch (ProtocolException e) {
            LOG.fine(() -> "ignoring malformed cancel: " + e.getMessage());
            return Optional.empty();
        }
    }
}
