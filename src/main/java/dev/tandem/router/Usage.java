package dev.tandem.router;

/** Token counts of a finished request, as OpenAI reports them. */
public record Usage(int promptTokens, int completionTokens) {
  public int totalTokens() {
    return promptTokens + completionTokens;
  }
}
