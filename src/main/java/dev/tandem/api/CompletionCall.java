package dev.tandem.api;

import dev.tandem.router.GenerationRequest;

/** A parsed {@code /v1/completions} body: what to generate and how to answer. */
public record CompletionCall(GenerationRequest generation, boolean stream, String model) {
}
