package dev.tandem.bench.trace;

/** Thrown by a line parser, which knows what is wrong but not where: the reader adds file and line. */
final class BadTraceLine extends RuntimeException {
    BadTraceLine(String problem) {
        super(problem, null, false, false);
    }
}
