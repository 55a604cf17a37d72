package dev.tandem.bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One real HTTP hop for {@code tandem bench load}: Debian's nginx, started on loopback from a generated
 * configuration that proxies to the direct upstream with buffering off (as one would put nginx in
 * front of an SSE service), keep-alive to the upstream, no access log. Runs as the current user in a
 * directory of its own.
 */
final class NginxProxy implements AutoCloseable {
    private final Process process;
    private final int port;

    private NginxProxy(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** The nginx binary on this machine, if any. */
    static Optional<Path> find() {
        for (String dir : (System.getenv().getOrDefault("PATH", "") + File.pathSeparator + "/usr/sbin:/usr/local/sbin")
                .split(File.pathSeparator)) {
            Path p = Path.of(dir, "nginx");
            if (!dir.isEmpty() && Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    static String config(Path dir, int listenPort, int upstreamPort, int workers) {
        return """
                daemon off;
                master_process on;
                worker_processes %d;
                pid %s/nginx.pid;
                error_log %s/error.log warn;
                events { worker_connections 4096; }
                http {
                    access_log off;
                    client_body_temp_path %s/body;
                    proxy_temp_path %s/proxy;
                    fastcgi_temp_path %s/fastcgi;
                    uwsgi_temp_path %s/uwsgi;
                    scgi_temp_path %s/scgi;
                    upstream direct { server 127.0.0.1:%d; keepalive 256; }
                    server {
                        listen 127.0.0.1:%d;
                        location / {
                            proxy_pass http://direct;
                            proxy_http_version 1.1;
                            proxy_set_header Connection "";
                            proxy_buffering off;
                            proxy_request_buffering off;
                        }
                    }
                }
                """.formatted(workers, dir, dir, dir, dir, dir, dir, dir, upstreamPort, listenPort);
    }

    static NginxProxy start(Path nginx, Path dir, int listenPort, int upstreamPort) throws IOException {
        Files.createDirectories(dir);
        Path conf = dir.resolve("nginx.conf");
        Files.writeString(conf, config(dir, listenPort, upstreamPort, 1));
        Process p = new ProcessBuilder(List.of(
                        nginx.toString(), "-p", dir.toString(), "-c", conf.toString(), "-e", dir + "/error.log"))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("nginx.out").toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IOException(
                        "nginx exited with " + p.exitValue() + ": " + Files.readString(dir.resolve("nginx.out")));
            }
            try (var s = new java.net.Socket("127.0.0.1", listenPort)) {
                return new NginxProxy(p, listenPort);
            } catch (IOException notYet) {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        p.destroyForcibly();
        throw new IOException("nginx did not listen on " + listenPort + " within 10 s");
    }

    int port() {
        return port;
    }

    @Override
    public void close() {
        BenchProcesses.stop(List.of(process), 5);
    }
}
