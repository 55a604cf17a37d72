package dev.tandem.protocol;

import io.vertx.core.json.JsonObject;

/** Encodes one wire record as JSON and back; decoding rejects a malformed message with {@link ProtocolException}. */
public interface JsonCodec<T> {

    JsonObject encode(T value);

    T decode(JsonObject json);

    /** A message body as a JSON object, or a {@link ProtocolException} when it is anything else. */
    static JsonObject object(Object body) {
        return JsonFields.object(body);
    }
}
