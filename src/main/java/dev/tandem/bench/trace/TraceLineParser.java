package dev.tandem.bench.trace;

/** Reads one trace format a line at a time; it keeps what it needs across lines (header, clock). */
interface TraceLineParser {
    /**
     * The request on a non-blank line, or null for a line that holds none (a CSV header).
     *
     * @throws BadTraceLine saying what is wrong with the line
     */
    TraceRequest parse(String line);
}
