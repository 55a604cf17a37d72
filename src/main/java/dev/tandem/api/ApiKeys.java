package dev.tandem.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;

/**
 * The configured API keys ({@code http.api-keys}) and the check of an {@code Authorization} value
 * against them, shared by the HTTP API and the SockJS bridge (whose frames carry the same value in
 * their headers). Compared in constant time, over SHA-256 digests so not even the length leaks.
 */
public final class ApiKeys {
    private static final String PREFIX = "Bearer ";
    private final List<byte[]> keyDigests;

    public ApiKeys(List<String> keys) {
        this.keyDigests = keys.stream().map(ApiKeys::digest).toList();
    }

    /** True when no key is configured: nothing needs one. */
    public boolean open() {
        return keyDigests.isEmpty();
    }

    /** Is {@code authorization} ({@code Bearer <key>}, the scheme in any case) one of the keys? */
    public boolean accepts(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
            return false;
        }
        byte[] given = digest(authorization.substring(PREFIX.length()).trim());
        boolean ok = false;
        for (byte[] key : keyDigests) {
            ok |= MessageDigest.isEqual(key, given);
        }
        return ok;
    }

    private static byte[] digest(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
