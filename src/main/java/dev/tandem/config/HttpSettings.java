package dev.tandem.config;

/** The router's HTTP listener. */
public record HttpSettings(String host, int port, long maxBodyBytes) {

  static HttpSettings read(ConfigSection s) {
    HttpSettings h = new HttpSettings(
        s.string("host", "127.0.0.1"),
        s.integer("port", 8080, 0, 65535),
        s.integer("max-body-bytes", 1L << 20, 1024, 1L << 30));
    s.rejectUnknownKeys();
    return h;
  }

  public HttpSettings withPort(int port) {
    return new HttpSettings(host, port, maxBodyBytes);
  }
}
