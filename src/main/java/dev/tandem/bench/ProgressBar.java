package dev.tandem.bench;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.IntSupplier;

/** A one-line progress bar on a terminal stream, redrawn twice a second until {@link #close()}. */
final class ProgressBar implements AutoCloseable {
    private static final int WIDTH = 30;

    private final PrintStream out;
    private final String label;
    private final int total;
    private final IntSupplier done;
    private final IntSupplier errors;
    private final long start = System.nanoTime();
    private final Thread painter;

    ProgressBar(PrintStream out, String label, int total, IntSupplier done, IntSupplier errors) {
        this.out = out;
        this.label = label;
        this.total = total;
        this.done = done;
        this.errors = errors;
        this.painter = new Thread(this::paintLoop, "bench-progress");
        painter.setDaemon(true);
        painter.start();
    }

    private void paintLoop() {
        while (!Thread.currentThread().isInterrupted()) {
            paint();
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private synchronized void paint() {
        out.print("\r" + line(label, done.getAsInt(), total, errors.getAsInt(), (System.nanoTime() - start) / 1e9));
        out.flush();
    }

    static String line(String label, int done, int total, int errors, double seconds) {
        int filled = total == 0 ? WIDTH : (int) ((long) done * WIDTH / total);
        return String.format(
                Locale.ROOT,
                "%-24s [%s%s] %d/%d requests, %d errors, %.0f s ",
                label,
                "#".repeat(filled),
                ".".repeat(WIDTH - filled),
                done,
                total,
                errors,
                seconds);
    }

    @Override
    public void close() {
        painter.interrupt();
        try {
            painter.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        paint();
        out.println();
    }
}
