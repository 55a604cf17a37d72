package dev.tandem.engine.tokenizer;

/** One turn of a chat: a role (system, user, assistant, …) and its text. */
public record ChatMessage(String role, String content) {}
