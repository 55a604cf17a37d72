package dev.tandem.api;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;

/**
 * Requires {@code Authorization: Bearer <key>} with one of the configured keys. Keys are compared in
 * constant time (over their SHA-256, so not even the length leaks).
 */
final class ApiKeyHandler implements Handler<RoutingContext> {
  private static final String PREFIX = "Bearer ";
  private final List<byte[]> keyDigests;

  ApiKeyHandler(List<String> keys) {
    this.keyDigests = keys.stream().map(ApiKeyHandler::digest).toList();
  }

  @Override
  public void handle(RoutingContext ctx) {
    String header = ctx.request().getHeader("Authorization");
    if (header != null && header.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
      byte[] given = digest(header.substring(PREFIX.length()).trim());
      boolean ok = false;
      for (byte[] key : keyDigests) {
        ok |= MessageDigest.isEqual(key, given);
      }
      if (ok) {
        ctx.next();
        return;
      }
    }
    ErrorResponses.send(ctx.response(), 401, ErrorResponses.body(header == null
            ? "You didn't provide an API key: send it as 'Authorization: Bearer <key>'"
            : "Incorrect API key provided", "invalid_request_error", null, "invalid_api_key"));
  }

  private static byte[] digest(String key) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
