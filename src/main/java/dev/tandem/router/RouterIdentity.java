package dev.tandem.router;

/**
 * Who a router is on the wire: {@code routerId} names its token address (decode workers stream there),
 * {@code nodeId} its cluster member (workers drop its work when that member leaves).
 */
public record RouterIdentity(String routerId, String nodeId) {}
