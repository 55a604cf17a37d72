package dev.tandem.api.http;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;

/**
 * A WebSocket client made of raw bytes, for frames no WebSocket library sends: RSV bits, invalid UTF-8,
 * one frame over the limit, a header announcing more bytes than ever come.
 */
final class RawWebSocket implements AutoCloseable {
    static final int TEXT = 1;
    static final int BINARY = 2;
    static final int CLOSE = 8;

    /** A frame from the server; {@code code} and {@code reason} for a close, -1 and "" otherwise. */
    record Frame(int opcode, byte[] payload, int code, String reason) {
        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }
    }

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    private RawWebSocket(Socket socket) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.in = new DataInputStream(socket.getInputStream());
    }

    static RawWebSocket connect(int port, String path) throws IOException {
        Socket socket = dev.tandem.TestTls.open(port);
        // A hang guard, not a timed assertion: the server answers every frame at once.
        socket.setSoTimeout(10_000);
        RawWebSocket ws = new RawWebSocket(socket);
        ws.out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        StringBuilder head = new StringBuilder();
        InputStream raw = ws.in;
        while (!head.toString().endsWith("\r\n\r\n") && head.length() < 8192) {
            int c = raw.read();
            if (c < 0) {
                throw new EOFException("closed during the handshake: " + head);
            }
            head.append((char) c);
        }
        if (!head.toString().startsWith("HTTP/1.1 101")) {
            throw new IOException("no upgrade: " + head);
        }
        return ws;
    }

    /** Writes one masked frame: FIN, the RSV bits (0-7) and the opcode as given. */
    void frame(boolean fin, int rsv, int opcode, byte[] payload) throws IOException {
        ByteArrayOutputStream f = new ByteArrayOutputStream();
        f.write((fin ? 0x80 : 0) | (rsv & 7) << 4 | opcode);
        header(f, payload.length);
        byte[] mask = {1, 2, 3, 4};
        f.write(mask);
        for (int i = 0; i < payload.length; i++) {
            f.write(payload[i] ^ mask[i % 4]);
        }
        out.write(f.toByteArray());
        out.flush();
    }

    void text(String text) throws IOException {
        frame(true, 0, TEXT, text.getBytes(StandardCharsets.UTF_8));
    }

    /** Writes only the header of a masked text frame announcing {@code length} bytes (and the mask). */
    void announce(long length) throws IOException {
        ByteArrayOutputStream f = new ByteArrayOutputStream();
        f.write(0x80 | TEXT);
        header(f, length);
        f.write(new byte[] {1, 2, 3, 4});
        out.write(f.toByteArray());
        out.flush();
    }

    /** Writes raw bytes as they are. */
    void raw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    private static void header(ByteArrayOutputStream f, long length) {
        if (length < 126) {
            f.write(0x80 | (int) length);
        } else if (length < 65536) {
            f.write(0x80 | 126);
            f.write((int) (length >> 8));
            f.write((int) length);
        } else {
            f.write(0x80 | 127);
            for (int i = 7; i >= 0; i--) {
                f.write((int) (length >> (8 * i)));
            }
        }
    }

    /** The next frame, or null when the server closed the connection without one. */
    Frame read() throws IOException {
        int b0;
        try {
            b0 = in.read();
        } catch (SocketException e) {
            return null; // reset
        }
        if (b0 < 0) {
            return null;
        }
        int b1 = in.readUnsignedByte();
        long length = b1 & 0x7f;
        if (length == 126) {
            length = in.readUnsignedShort();
        } else if (length == 127) {
            length = in.readLong();
        }
        byte[] payload = new byte[(int) length];
        in.readFully(payload);
        int opcode = b0 & 0x0f;
        if (opcode == CLOSE && payload.length >= 2) {
            int code = (payload[0] & 0xff) << 8 | payload[1] & 0xff;
            return new Frame(opcode, payload, code, new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8));
        }
        return new Frame(opcode, payload, -1, "");
    }

    /** Reads frames until a close frame (returned) or the end of the stream (null). */
    Frame awaitClose() throws IOException {
        while (true) {
            Frame f = read();
            if (f == null || f.opcode() == CLOSE) {
                return f;
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
