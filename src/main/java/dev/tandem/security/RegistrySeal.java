package dev.tandem.security;

/**
 * How a worker registry entry is stored: as it is, or sealed with a proof of the member that wrote it
 * ({@link SignedRegistry}). Hazelcast's open-source edition lets any process that reaches its port join and
 * write every map, so with the cluster's mutual TLS on, routers believe only entries they can verify.
 */
public interface RegistrySeal {
    /** The stored form of {@code entryJson} under {@code key}. */
    String seal(String key, String entryJson);

    /** The entry's JSON if the stored value under {@code key} verifies, else null (the entry is ignored). */
    String open(String key, String stored);

    /** Entries stored as they are (no cluster TLS): every entry is believed. */
    RegistrySeal NONE = new RegistrySeal() {
        @Override
        public String seal(String key, String entryJson) {
            return entryJson;
        }

        @Override
        public String open(String key, String stored) {
            // A member without cluster TLS among members with it reads their sealed entries unverified.
            if (stored.startsWith("{\"entry\"")) {
                try {
                    return new io.vertx.core.json.JsonObject(stored).getString("entry", stored);
                } catch (RuntimeException e) {
                    return stored;
                }
            }
            return stored;
        }
    };
}
