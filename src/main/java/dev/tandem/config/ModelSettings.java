package dev.tandem.config;

/** Which model the workers load: a llama2.c checkpoint and tokenizer, or (both empty) the built-in model. */
public record ModelSettings(String path, String tokenizer) {

  static ModelSettings read(ConfigSection s) {
    ModelSettings m = new ModelSettings(s.string("path", ""), s.string("tokenizer", ""));
    s.rejectUnknownKeys();
    return m;
  }

  public boolean builtin() {
    return path.isBlank();
  }

  public ModelSettings withPath(String path) {
    return new ModelSettings(path, tokenizer);
  }

  public ModelSettings withTokenizer(String tokenizer) {
    return new ModelSettings(path, tokenizer);
  }
}
