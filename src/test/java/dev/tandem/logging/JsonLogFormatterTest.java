package dev.tandem.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

/** {@code logging.format: json}: one parseable object per line, with a request's ids as fields. */
class JsonLogFormatterTest {
    private final JsonLogFormatter formatter = new JsonLogFormatter();

    @Test
    void aRequestLineCarriesItsIds() {
        LogRecord r = new LogRecord(Level.INFO, "request 42 ok stop: \"quoted\"\nnext line");
        r.setLoggerName("dev.tandem.router.RequestLifecycle");
        r.setParameters(new Object[] {new LogFields(42, "4bf92f3577b34da6a3ce929d0e0e4736")});
        String line = formatter.format(r);
        assertTrue(line.endsWith(System.lineSeparator()));
        assertEquals(1, line.strip().lines().count(), "one line, newlines escaped: " + line);
        JsonObject json = new JsonObject(line);
        assertEquals("INFO", json.getString("level"));
        assertEquals("dev.tandem.router.RequestLifecycle", json.getString("logger"));
        assertEquals("request 42 ok stop: \"quoted\"\nnext line", json.getString("message"));
        assertEquals(42L, json.getLong("request_id"));
        assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", json.getString("trace_id"));
        assertTrue(json.getString("time").matches("\\d{4}-\\d\\d-\\d\\dT.*Z"), json.getString("time"));
    }

    @Test
    void otherLinesHaveNoRequestFieldsAndKeepTheirStackTrace() {
        LogRecord r = new LogRecord(Level.WARNING, "decode step failed");
        r.setLoggerName("w");
        r.setThrown(new IllegalStateException("boom"));
        JsonObject json = new JsonObject(formatter.format(r));
        assertFalse(json.containsKey("request_id"));
        assertFalse(json.containsKey("trace_id"));
        assertTrue(json.getString("error").startsWith("java.lang.IllegalStateException: boom"), json.encode());
    }

    @Test
    void anUntracedRequestHasAnIdButNoTrace() {
        LogRecord r = new LogRecord(Level.INFO, "request 7 ok");
        r.setLoggerName("x");
        r.setParameters(new Object[] {new LogFields(7, null)});
        JsonObject json = new JsonObject(formatter.format(r));
        assertEquals(7L, json.getLong("request_id"));
        assertFalse(json.containsKey("trace_id"));
    }
}
