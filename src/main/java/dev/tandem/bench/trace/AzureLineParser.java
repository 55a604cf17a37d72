package dev.tandem.bench.trace;

import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;

/**
 * The Azure LLM inference CSV (Splitwise traces): a {@code TIMESTAMP,ContextTokens,GeneratedTokens}
 * header, then rows like {@code 2023-11-16 18:15:46.6805900,374,44}. It has no prefix information.
 */
final class AzureLineParser implements TraceLineParser {
    static final String HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens";

    // The files write 7 fractional digits (100 ns); accept 0 to 9 so a re-export with fewer still reads.
    private static final DateTimeFormatter TIMESTAMP = new DateTimeFormatterBuilder()
            .appendPattern("uuuu-MM-dd HH:mm:ss")
            .optionalStart()
            .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
            .optionalEnd()
            .toFormatter();

    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private final ArrivalClock clock = new ArrivalClock(1_000_000);
    private boolean headerSeen;

    @Override
    public TraceRequest parse(String line) {
        if (!headerSeen) {
            // A BOM would make a correct header look wrong.
            String header = line.strip().replace("\uFEFF", "");
            if (!header.equals(HEADER)) {
                throw new BadTraceLine("expected the header " + HEADER + ", got " + line.strip());
            }
            headerSeen = true;
            return null;
        }
        String[] cells = line.split(",", -1);
        if (cells.length != 3) {
            throw new BadTraceLine("expected 3 columns (" + HEADER + "), got " + cells.length);
        }
        String timestamp = cells[0].strip();
        long nanos = nanos(timestamp);
        int context = positive(cells[1], "ContextTokens");
        int generated = positive(cells[2], "GeneratedTokens");
        return new TraceRequest(clock.arrivalMs(nanos, timestamp), context, generated);
    }

    /** Nanoseconds since the epoch, reading the timestamp as UTC: only differences matter, and UTC has no DST. */
    private static long nanos(String timestamp) {
        try {
            LocalDateTime t = LocalDateTime.parse(timestamp, TIMESTAMP);
            return Math.addExact(Math.multiplyExact(t.toEpochSecond(ZoneOffset.UTC), NANOS_PER_SECOND), t.getNano());
        } catch (DateTimeException | ArithmeticException e) {
            throw new BadTraceLine(
                    "unparsable TIMESTAMP '" + timestamp + "' (expected like 2023-11-16 18:15:46.6805900)");
        }
    }

    private static int positive(String cell, String column) {
        String text = cell.strip();
        long v;
        try {
            v = Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new BadTraceLine(column + " must be an integer, got '" + text + "'");
        }
        if (v <= 0 || v > Integer.MAX_VALUE) {
            throw new BadTraceLine(column + " must be positive and fit an int, got " + v);
        }
        return (int) v;
    }
}
