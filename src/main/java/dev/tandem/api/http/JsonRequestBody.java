package dev.tandem.api.http;

import dev.tandem.api.ApiException;
import dev.tandem.api.StrictJson;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.Locale;

/**
 * A request body that must be a JSON object: {@code Content-Type: application/json} (with {@code
 * charset=utf-8} or no parameter), no {@code Content-Encoding} but identity, UTF-8 bytes. Anything else
 * is refused by name rather than guessed at: a body declared as something else is not read as JSON.
 */
final class JsonRequestBody {
    private JsonRequestBody() {}

    /** The body of {@code ctx} as a JSON object, or the 4xx that says why it is not one. */
    static JsonObject read(RoutingContext ctx) {
        checkHeaders(ctx.request().getHeader("Content-Type"), ctx.request().getHeader("Content-Encoding"));
        Buffer body = ctx.body() == null ? null : ctx.body().buffer();
        if (body == null || body.length() == 0) {
            throw new ApiException(400, "invalid_request_error", null, "invalid_json", "the request body is empty");
        }
        return parseObject(body);
    }

    /**
     * A route before the body is read: 415 from the headers alone, so a body that would be refused is never
     * buffered (and the connection is closed, see {@link UnreadBodyClose}).
     */
    static void refuseOtherMediaTypes(RoutingContext ctx) {
        try {
            checkHeaders(ctx.request().getHeader("Content-Type"), ctx.request().getHeader("Content-Encoding"));
        } catch (ApiException e) {
            ErrorResponses.send(ctx.response(), e);
            return;
        }
        ctx.next();
    }

    /** 415 unless the media type is JSON in UTF-8 and the body is not encoded. */
    static void checkHeaders(String contentType, String contentEncoding) {
        if (contentEncoding != null && !contentEncoding.trim().equalsIgnoreCase("identity")) {
            throw new ApiException(
                    415,
                    "invalid_request_error",
                    null,
                    "unsupported_content_encoding",
                    "Content-Encoding '" + printable(contentEncoding) + "' is not supported: send the body unencoded");
        }
        if (contentType == null || !isJsonUtf8(contentType)) {
            throw new ApiException(
                    415,
                    "invalid_request_error",
                    null,
                    "unsupported_media_type",
                    "Content-Type must be application/json (charset utf-8, or none), got "
                            + (contentType == null ? "none" : "'" + printable(contentType) + "'"));
        }
    }

    private static boolean isJsonUtf8(String contentType) {
        String[] parts = contentType.split(";", -1);
        if (!parts[0].trim().toLowerCase(Locale.ROOT).equals("application/json")) {
            return false;
        }
        for (int i = 1; i < parts.length; i++) {
            String param = parts[i].trim();
            if (param.isEmpty()) {
                continue;
            }
            int eq = param.indexOf('=');
            if (eq < 0 || !param.substring(0, eq).trim().equalsIgnoreCase("charset")) {
                return false;
            }
            String value = param.substring(eq + 1).trim();
            if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                value = value.substring(1, value.length() - 1);
            }
            if (!value.equalsIgnoreCase("utf-8")) {
                return false;
            }
        }
        return true;
    }

    /** A header value fit for a message: control characters shown as '?', at most 100 characters. */
    static String printable(String value) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < value.length() && i < 100; i++) {
            char c = value.charAt(i);
            sb.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return sb.toString();
    }

    /** Parses a JSON object (UTF-8 only) or throws a 400 saying what is wrong with it. */
    static JsonObject parseObject(Buffer body) {
        Object parsed;
        try {
            parsed = StrictJson.decode(body);
        } catch (DecodeException e) {
            throw new ApiException(
                    400,
                    "invalid_request_error",
                    null,
                    "invalid_json",
                    "the request body is not valid UTF-8 JSON: " + e.getMessage());
        }
        if (!(parsed instanceof JsonObject json)) {
            throw new ApiException(
                    400, "invalid_request_error", null, "invalid_json", "the request body must be a JSON object");
        }
        return json;
    }
}
