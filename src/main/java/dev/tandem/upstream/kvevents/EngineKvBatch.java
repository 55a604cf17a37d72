package dev.tandem.upstream.kvevents;

import java.util.List;

/**
 * One message of an engine's KV event stream: its sequence number (from the message's second frame,
 * counted from 0 by the publisher) and the decoded {@code KVEventBatch}.
 */
public record EngineKvBatch(long seq, double timestamp, List<EngineKvEvent> events) {}
