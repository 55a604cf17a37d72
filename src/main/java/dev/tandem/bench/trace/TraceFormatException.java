package dev.tandem.bench.trace;

import java.nio.file.Path;

/** A trace file that cannot be read as a trace: the message names the file, the line and the problem. */
public final class TraceFormatException extends RuntimeException {
    private final transient Path file;
    private final int line;

    /** A problem on one line ({@code line} is 1-based). */
    TraceFormatException(Path file, int line, String problem) {
        super(file + " line " + line + ": " + problem);
        this.file = file;
        this.line = line;
    }

    /** A problem with the file as a whole. */
    TraceFormatException(Path file, String problem) {
        super(file + ": " + problem);
        this.file = file;
        this.line = 0;
    }

    public Path file() {
        return file;
    }

    /** The 1-based line at fault, 0 when the fault is the whole file's. */
    public int line() {
        return line;
    }
}
