package dev.tandem.logging;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.ErrorManager;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * Writes log records to standard error from a thread of its own. The router logs a line per request on
 * its event loop; with {@link java.util.logging.ConsoleHandler} that line was formatted there and written
 * with a flush — a syscall — each time, about 240 µs of the loop per request in a burst of 64 (async-profiler),
 * more than the rest of the request's handling. Here the caller only queues the record; the writer formats
 * what has queued up and flushes once per batch.
 *
 * <p>The queue is bounded and a full queue never blocks the caller (an event loop must not wait on a log):
 * the record is dropped and counted, and the count is written as soon as there is room again. Closing (the
 * log manager's reset at JVM exit) writes what is queued first.
 */
public final class AsyncConsoleHandler extends Handler {
    static final int DEFAULT_CAPACITY = 16_384;
    private static final LogRecord STOP = new LogRecord(Level.OFF, "stop");

    private final BlockingQueue<LogRecord> queue;
    private final PrintStream out;
    private final AtomicLong dropped = new AtomicLong();
    private final Thread writer;
    private volatile boolean closed;

    /** What {@code handlers=dev.tandem.logging.AsyncConsoleHandler} in a logging configuration creates. */
    public AsyncConsoleHandler() {
        this(System.err, DEFAULT_CAPACITY);
    }

    AsyncConsoleHandler(PrintStream out, int capacity) {
        this.out = out;
        this.queue = new ArrayBlockingQueue<>(capacity);
        setFormatter(new LogLineFormatter());
        setLevel(Level.ALL);
        writer = new Thread(this::writeLoop, "tandem-log-writer");
        writer.setDaemon(true);
        writer.start();
    }

    @Override
    public void publish(LogRecord record) {
        if (closed || !isLoggable(record)) {
            return;
        }
        if (!queue.offer(record)) {
            dropped.incrementAndGet();
        }
    }

    /** Records dropped so far because the queue was full. */
    long dropped() {
        return dropped.get();
    }

    private void writeLoop() {
        List<LogRecord> batch = new ArrayList<>();
        long reportedDrops = 0;
        try {
            while (true) {
                batch.add(queue.take());
                queue.drainTo(batch);
                boolean stop = false;
                for (LogRecord record : batch) {
                    if (record == STOP) {
                        stop = true;
                    } else {
                        write(record);
                    }
                }
                batch.clear();
                long drops = dropped.get();
                if (drops != reportedDrops) {
                    out.print("tandem: " + (drops - reportedDrops) + " log records dropped (the log could not keep up)"
                            + System.lineSeparator());
                    reportedDrops = drops;
                }
                out.flush();
                if (stop) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void write(LogRecord record) {
        try {
            out.print(getFormatter().format(record));
        } catch (RuntimeException e) {
            reportError("a log record could not be formatted", e, ErrorManager.FORMAT_FAILURE);
        }
    }

    @Override
    public void flush() {
        out.flush();
    }

    /** Stops taking records and waits (at most 5 s) for the queued ones to be written. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            queue.put(STOP);
            writer.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        out.flush();
    }
}
