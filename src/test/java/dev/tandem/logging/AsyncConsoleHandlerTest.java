package dev.tandem.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

/** The log handler the router's loop hands its request lines to: order, format, drops, and close. */
@org.junit.jupiter.api.Timeout(30)
class AsyncConsoleHandlerTest {

    private static LogRecord record(Level level, String message) {
        LogRecord r = new LogRecord(level, message);
        r.setLoggerName("dev.tandem.router.RequestLifecycle");
        r.setInstant(Instant.parse("2026-12-03T12:34:56.789Z"));
        return r;
    }

    @Test
    void writesEveryRecordInOrderAndDrainsOnClose() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        AsyncConsoleHandler handler =
                new AsyncConsoleHandler(new PrintStream(bytes, false, StandardCharsets.UTF_8), 2048);
        for (int i = 0; i < 1000; i++) {
            handler.publish(record(Level.INFO, "request " + i + " ok"));
        }
        handler.close(); // returns once what was queued is written
        handler.publish(record(Level.INFO, "after close")); // ignored
        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(0, handler.dropped());
        assertEquals(1000, lines.size());
        for (int i = 0; i < 1000; i++) {
            assertTrue(
                    lines.get(i).endsWith(" INFO    dev.tandem.router.RequestLifecycle - request " + i + " ok"),
                    lines.get(i));
        }
    }

    @Test
    void aFullQueueDropsAndCountsInsteadOfBlockingTheCaller() throws Exception {
        CountDownLatch writing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        // An output that blocks on its first write: the writer is stuck, the queue fills.
        OutputStream stuck = new OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                writing.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                bytes.write(b, off, len);
            }
        };
        AsyncConsoleHandler handler = new AsyncConsoleHandler(new PrintStream(stuck, false, StandardCharsets.UTF_8), 4);
        handler.publish(record(Level.INFO, "first"));
        assertTrue(writing.await(10, TimeUnit.SECONDS), "the writer took the first record");
        for (int i = 0; i < 10; i++) {
            handler.publish(record(Level.WARNING, "more " + i)); // returns at once although nothing is written
        }
        assertEquals(6, handler.dropped(), "4 fit in the queue, 6 were dropped");
        release.countDown();
        handler.close();
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("- first"), out);
        assertTrue(out.contains("WARNING dev.tandem.router.RequestLifecycle - more 3"), out);
        assertTrue(!out.contains("- more 4"), out);
        assertTrue(out.contains("tandem: 6 log records dropped"), out);
    }

    @Test
    void theFormatterWritesTimeLevelLoggerMessageAndTheStackTrace() {
        LogRecord r = record(Level.SEVERE, "boom {0}");
        r.setParameters(new Object[] {"now"});
        r.setThrown(new IllegalStateException("why"));
        String line = new LogLineFormatter().format(r);
        String time = java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss.SSS")
                .withZone(java.time.ZoneId.systemDefault())
                .format(r.getInstant());
        assertTrue(line.startsWith(time + " SEVERE  dev.tandem.router.RequestLifecycle - boom now"), line);
        assertTrue(line.contains("java.lang.IllegalStateException: why"), line);
        assertTrue(line.endsWith(System.lineSeparator()), line);
    }
}
