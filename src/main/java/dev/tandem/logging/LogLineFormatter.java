package dev.tandem.logging;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;

/**
 * {@code 12:34:56.789 INFO    logger.name - message}, and the stack trace when there is one. Unlike
 * {@link java.util.logging.SimpleFormatter} it never asks a record for its source class, which makes the
 * record walk the caller's stack (on a thread that is not the caller's, the wrong stack), and it parses
 * no format string per line.
 */
public final class LogLineFormatter extends Formatter {
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneId.systemDefault());

    @Override
    public String format(LogRecord record) {
        StringBuilder line =
                new StringBuilder(128).append(TIME.format(record.getInstant())).append(' ');
        String level = record.getLevel().getName();
        line.append(level);
        for (int pad = level.length(); pad < 7; pad++) {
            line.append(' ');
        }
        line.append(' ').append(record.getLoggerName()).append(" - ").append(formatMessage(record));
        Throwable thrown = record.getThrown();
        if (thrown != null) {
            StringWriter trace = new StringWriter();
            thrown.printStackTrace(new PrintWriter(trace));
            line.append(System.lineSeparator()).append(trace.toString().stripTrailing());
        }
        return line.append(System.lineSeparator()).toString();
    }
}
