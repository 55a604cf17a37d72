package dev.tandem;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;

/**
 * Records every java.util.logging record at or above a level while open (attached to the root logger), so a
 * test can assert what the server logged about a client: how severe, and naming whom.
 */
public final class LogCapture extends Handler implements AutoCloseable {
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Logger root = Logger.getLogger("");

    public LogCapture(Level level) {
        setLevel(level);
        root.addHandler(this);
    }

    @Override
    public void publish(LogRecord record) {
        if (isLoggable(record)) {
            records.add(record);
        }
    }

    /** The records at {@code level} or above, each as "LEVEL logger: message (thrown)". */
    public List<String> atLeast(Level level) {
        return records.stream()
                .filter(r -> r.getLevel().intValue() >= level.intValue())
                .map(LogCapture::describe)
                .collect(Collectors.toList());
    }

    /** The records at exactly {@code level} whose message contains {@code text}. */
    public List<String> containing(Level level, String text) {
        return records.stream()
                .filter(r -> r.getLevel().equals(level))
                .filter(r -> r.getMessage() != null && r.getMessage().contains(text))
                .map(LogCapture::describe)
                .collect(Collectors.toList());
    }

    private static String describe(LogRecord r) {
        return r.getLevel() + " " + r.getLoggerName() + ": " + r.getMessage()
                + (r.getThrown() == null ? "" : " (" + r.getThrown() + ")");
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        root.removeHandler(this);
    }
}
