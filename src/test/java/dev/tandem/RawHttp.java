package dev.tandem;

import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * Raw bytes to an HTTP port, for what no HTTP client will send (bad chunk sizes, negative lengths, NULs in
 * headers): writes the request, reads until the server closes or goes quiet, and parses the first response.
 */
public final class RawHttp {
    /** A hang guard, not a timed assertion: a correct server answers at once. */
    private static final int READ_TIMEOUT_MS = 10_000;

    public record Response(int status, String head, String body, boolean closed) {
        public JsonObject json() {
            return new JsonObject(body);
        }

        public String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }
    }

    private RawHttp() {}

    public static Response exchange(int port, byte[] request) throws IOException {
        return exchange(port, request, false);
    }

    /**
     * With {@code thenAwaitClose}, reads on after the response until the server closes the connection
     * ({@link Response#closed}); a server that keeps it open fails the test after the hang guard.
     */
    public static Response exchange(int port, byte[] request, boolean thenAwaitClose) throws IOException {
        try (Socket socket = TestTls.open(port)) {
            socket.setSoTimeout(READ_TIMEOUT_MS);
            OutputStream out = socket.getOutputStream();
            try {
                out.write(request);
                out.flush();
            } catch (IOException e) {
                // The server may answer and close before the whole request is written; read what it said.
            }
            // A HEAD response has no body, whatever its headers say.
            boolean head =
                    request.length >= 5 && new String(request, 0, 5, StandardCharsets.ISO_8859_1).equals("HEAD ");
            Response r = read(socket.getInputStream(), head);
            if (thenAwaitClose && !r.closed()) {
                try {
                    int b = socket.getInputStream().read();
                    return new Response(r.status(), r.head(), r.body(), b < 0);
                } catch (SocketTimeoutException e) {
                    return r;
                } catch (IOException e) {
                    return new Response(r.status(), r.head(), r.body(), true);
                }
            }
            return r;
        }
    }

    public static Response exchange(int port, String request) throws IOException {
        return exchange(port, request.getBytes(StandardCharsets.ISO_8859_1), false);
    }

    public static Response exchangeThenAwaitClose(int port, String request) throws IOException {
        return exchange(port, request.getBytes(StandardCharsets.ISO_8859_1), true);
    }

    /** Reads one response: the head, then Content-Length bytes (or until the close). */
    private static Response read(InputStream in, boolean headOnly) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        boolean closed = false;
        int headEnd = -1;
        long need = -1;
        try {
            byte[] chunk = new byte[8192];
            while (true) {
                if (headEnd >= 0 && need >= 0 && buf.size() >= headEnd + need) {
                    break;
                }
                if (headEnd >= 0
                        && need == CHUNKED
                        && buf.toString(StandardCharsets.ISO_8859_1).endsWith("0\r\n\r\n")) {
                    break;
                }
                int n = in.read(chunk);
                if (n < 0) {
                    closed = true;
                    break;
                }
                buf.write(chunk, 0, n);
                if (headEnd < 0) {
                    headEnd = buf.toString(StandardCharsets.ISO_8859_1).indexOf("\r\n\r\n");
                    if (headEnd >= 0) {
                        headEnd += 4;
                        String head = buf.toString(StandardCharsets.ISO_8859_1).substring(0, headEnd);
                        int status = Integer.parseInt(head.substring(9, 12));
                        need = headOnly || status == 204 || status == 304 || status < 200 ? 0 : contentLength(head);
                    }
                }
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no complete response within " + READ_TIMEOUT_MS + " ms: "
                    + buf.toString(StandardCharsets.ISO_8859_1));
        } catch (IOException e) {
            closed = true; // reset by the server after its answer
        }
        String all = buf.toString(StandardCharsets.UTF_8);
        if (all.isEmpty()) {
            return new Response(-1, "", "", closed);
        }
        int end = all.indexOf("\r\n\r\n");
        String head = end < 0 ? all : all.substring(0, end);
        String body = end < 0 ? "" : all.substring(end + 4);
        int status = Integer.parseInt(head.substring(9, 12));
        return new Response(status, head, body, closed);
    }

    private static final long CHUNKED = -2;

    /** The Content-Length, {@link #CHUNKED}, or -1 (read until the close). */
    private static long contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("transfer-encoding:")
                    && line.toLowerCase(java.util.Locale.ROOT).contains("chunked")) {
                return CHUNKED;
            }
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                return Long.parseLong(line.substring(15).trim());
            }
        }
        return -1;
    }
}
