package dev.tandem.api.http;

import dev.tandem.HttpTestClient;
import dev.tandem.TestTls;
import dev.tandem.config.TandemConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link SurfaceFuzzTest}'s hostile cases against the TLS listeners (issue 33): HTTP with WebSocket and the
 * TCP bridge behind the test certificate, every case in its own TLS session, the same outcomes asserted.
 */
class TlsSurfaceFuzzTest extends SurfaceFuzzTest {

    @BeforeAll
    void speakTls() {
        TestTls.useTls(TestTls.clientContext(false));
    }

    @AfterAll
    void speakClearTextAgain() {
        TestTls.useTls(null);
    }

    @Override
    TandemConfig secured(TandemConfig config) {
        return config.withHttp(config.http().withTls(TestTls.server(false, true), -1))
                .withBridge(config.bridge().withTls(TestTls.server(false, true)));
    }

    /** A TLS session per case costs a handshake: fewer cases keep the suite's time (same seed, same kinds). */
    @Override
    int cases() {
        return 200;
    }

    @Override
    HttpTestClient apiClient(int port) {
        return new HttpTestClient(port, TestTls.clientContext(false));
    }
}
