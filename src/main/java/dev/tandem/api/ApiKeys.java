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
        return match(authorization) >= 0;
    }

    /** Which key {@code authorization} carries (its index in the configured list), or -1. Every key is compared. */
    public int match(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
            return -1;
        }
        byte[] given = digest(authorization.substring(PREFIX.length()).trim());
        int found = -1;
        for (int i = 0; i < keyDigests.size(); i++) {
            if (MessageDigest.isEqual(keyDigests.get(i), given)) {
                found = i;
            }
        }
        return found;
    }

    private static byte[] digest(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
