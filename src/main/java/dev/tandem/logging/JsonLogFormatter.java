package dev.tandem.logging;

import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;

/**
 * {@code logging.format: json}: one JSON object per line — {@code time}, {@code level}, {@code logger},
 * {@code message}, {@code thread}, and where the line is about a request its {@code request_id} and
 * {@code trace_id} ({@link LogFields}), and the stack trace as {@code error} — for collectors (Loki,
 * Elasticsearch, Cloud Logging) that index fields rather than parse text.
 */
public final class JsonLogFormatter extends Formatter {

    @Override
    public String format(LogRecord record) {
        JsonObject line = new JsonObject()
                .put("time", record.getInstant().toString())
                .put("level", record.getLevel().getName())
                .put("logger", record.getLoggerName())
                .put("message", formatMessage(record))
                .put("thread", record.getLongThreadID());
        Object[] params = record.getParameters();
        if (params != null && params.length > 0 && params[0] instanceof LogFields fields) {
            line.put("request_id", fields.requestId());
            if (fields.traceId() != null) {
                line.put("trace_id", fields.traceId());
            }
        }
        Throwable thrown = record.getThrown();
        if (thrown != null) {
            StringWriter trace = new StringWriter();
            thrown.printStackTrace(new PrintWriter(trace));
            line.put("error", trace.toString().stripTrailing());
        }
        return line.encode() + System.lineSeparator();
    }

    /** Every handler of the root logger writes JSON from now on (the process's handlers are the root's). */
    public static void install() {
        for (Handler handler : LogManager.getLogManager().getLogger("").getHandlers()) {
            handler.setFormatter(new JsonLogFormatter());
        }
    }
}
