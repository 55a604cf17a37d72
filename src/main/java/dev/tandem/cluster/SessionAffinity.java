package dev.tandem.cluster;

import io.vertx.core.Future;

/**
 * Session affinity shared by every router replica: a session key → the decode worker that holds the
 * session's warm KV. Futures complete on the router's event loop. {@link AffinityStore} keeps it in
 * Hazelcast; unit tests of the request core keep it in a map.
 */
public interface SessionAffinity {

    /** The decode worker recorded for the session, or null. */
    Future<String> lookup(String sessionKey);

    Future<Void> record(String sessionKey, String decodeWorkerId);

    /** Forgets one session: its next request is scheduled as a new session's. */
    Future<Void> forgetSession(String sessionKey);

    /** Drops every session pinned to a worker that is gone, so no session waits for it. */
    Future<Void> forgetWorker(String decodeWorkerId);
}
