package dev.tandem.engine;

/**
 * What a worker serves: a name for the API, the shape, and a fingerprint of the weights so that
 * KV computed by one model is never decoded by another.
 */
public record ModelInfo(String name, ModelConfig config, long fingerprint) {}
