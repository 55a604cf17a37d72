package dev.tandem.bench;

import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/** A benchmark's console: one request log line per request would drown the progress bar. */
final class BenchLogging {
    /** Kept referenced: java.util.logging holds loggers weakly, and a collected one forgets its level. */
    private static final List<Logger> QUIETED =
            List.of(Logger.getLogger("dev.tandem"), Logger.getLogger("com.hazelcast"));

    private BenchLogging() {}

    /** Warnings and errors still show (Hazelcast's: errors only), unless -Dtandem.bench.verbose=true. */
    static void quietUnlessVerbose() {
        if (!Boolean.getBoolean("tandem.bench.verbose")) {
            QUIETED.get(0).setLevel(Level.WARNING);
            QUIETED.get(1).setLevel(Level.SEVERE);
        }
    }
}
