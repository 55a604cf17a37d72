package dev.tandem.config;

import java.util.List;

/**
 * How log lines are written ({@code logging.*}).
 *
 * @param format {@code text}: {@code 12:34:56.789 INFO    logger - message}; {@code json}: one JSON object per
 *               line (time, level, logger, message, and the request id and trace id where a line has them)
 *               for log collectors that parse fields instead of text
 */
public record LoggingSettings(String format) {

    public static final List<String> FORMATS = List.of("text", "json");

    static LoggingSettings read(ConfigSection s) {
        LoggingSettings l = new LoggingSettings(s.choice("format", "text", FORMATS));
        s.rejectUnknownKeys();
        return l;
    }

    public boolean json() {
        return format.equals("json");
    }
}
