package dev.tandem.api;

/** Which OpenAI endpoint a request came through; decides the shape of the answer. */
public enum ApiKind {
    COMPLETION,
    CHAT
}
