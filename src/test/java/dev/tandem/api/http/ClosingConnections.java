package dev.tandem.api.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** Raw-socket tests of answers that must end with the server closing the connection. */
final class ClosingConnections {
    private ClosingConnections() {}

    /**
     * Everything up to the server's close (a reset after the answer counts as closed); a connection still
     * open when the socket's read timeout, the hang guard, expires fails the test.
     */
    static String readUntilClosed(InputStream in) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        byte[] chunk = new byte[4096];
        try {
            for (int n; (n = in.read(chunk)) >= 0; ) {
                buf.write(chunk, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the connection is still open; read: " + buf.toString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // reset after the answer: closed all the same
        }
        return buf.toString(StandardCharsets.UTF_8);
    }
}
