package dev.tandem.api;

import dev.tandem.router.GenerationRequest;

/** A parsed completions or chat body: what to generate and how to answer. */
public record CompletionCall(
        GenerationRequest generation, ApiKind kind, boolean stream, boolean includeUsage, String model) {}
