package dev.tandem.security;

import dev.tandem.config.TlsSettings;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.ServerSSLOptions;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Watches a surface's PEM files and hands changed ones to its listener without a restart: new connections
 * get the new certificate, open ones (a stream in progress) keep the session they shook hands with. Polls the
 * files' content, which also sees Kubernetes' Secret updates (a symlink swapped under the mount). A changed
 * pair is checked first (the key belongs to the certificate, the CA parses), so a half-written rotation is
 * skipped until it is whole, and the old certificate keeps serving meanwhile.
 */
public final class CertificateReloader {
    private static final Logger LOG = Logger.getLogger(CertificateReloader.class.getName());
    /** How often the files are read; a rotation is live within this. */
    public static final long PERIOD_MS = 2_000;

    private final Vertx vertx;
    private final String surface;
    private final TlsSettings settings;
    private final boolean alpn;
    private final Function<ServerSSLOptions, Future<Boolean>> update;
    private TlsFiles current;
    /** Content last refused, so a broken file is reported once, not every period. */
    private TlsFiles refused;

    private long timer = -1;
    private boolean reading;

    public CertificateReloader(
            Vertx vertx,
            String surface,
            TlsSettings settings,
            TlsFiles current,
            boolean alpn,
            Function<ServerSSLOptions, Future<Boolean>> update) {
        this.vertx = vertx;
        this.surface = surface;
        this.settings = settings;
        this.current = current;
        this.alpn = alpn;
        this.update = update;
    }

    public void start() {
        timer = vertx.setPeriodic(PERIOD_MS, id -> poll());
    }

    public void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    /** Reads the files; applies them if they changed and hold together. */
    Future<Void> poll() {
        if (reading) {
            return Future.succeededFuture();
        }
        reading = true;
        return TlsFiles.read(vertx, settings)
                .compose(files ->
                        files.sameAs(current) || files.sameAs(refused) ? Future.succeededFuture() : apply(files))
                .onFailure(e -> LOG.log(Level.FINE, surface + ": cannot read the TLS files: " + e.getMessage()))
                .eventually(() -> {
                    reading = false;
                    return Future.succeededFuture();
                })
                .mapEmpty();
    }

    private Future<Void> apply(TlsFiles files) {
        // The check parses the pair (and returns its leaf): a worker thread, not the event loop.
        return vertx.executeBlocking(() -> files.check(vertx), false)
                .compose(leaf -> update.apply(files.serverOptions(alpn)).map(changed -> {
                    current = files;
                    LOG.info(surface + ": TLS certificate reloaded ("
                            + leaf.getSubjectX500Principal().getName() + ", valid until "
                            + leaf.getNotAfter().toInstant() + "): new connections use it");
                    return (Void) null;
                }))
                .onFailure(e -> {
                    refused = files;
                    LOG.warning(surface + ": the changed TLS files are not used (the old certificate keeps serving): "
                            + e.getMessage());
                });
    }
}
