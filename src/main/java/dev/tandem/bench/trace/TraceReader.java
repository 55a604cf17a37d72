package dev.tandem.bench.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reads a trace file, choosing the format by its extension: {@code .jsonl} or {@code .json} is Mooncake,
 * {@code .csv} is Azure. The file is streamed a line at a time (the Mooncake conversation trace is 12k lines
 * of long id arrays), and the first malformed line stops the read with a {@link TraceFormatException} that
 * names it: a benchmark on a silently truncated or misread trace would report numbers for the wrong traffic.
 */
public final class TraceReader {
    private TraceReader() {}

    /**
     * The first {@code maxRequests} requests of {@code file} (all of them when {@code maxRequests <= 0}).
     *
     * @throws TraceFormatException for an unknown extension, a malformed line, or a file without requests
     */
    public static Trace read(Path file, int maxRequests) throws IOException {
        TraceLineParser parser = parserFor(file);
        int limit = maxRequests <= 0 ? Integer.MAX_VALUE : maxRequests;
        List<TraceRequest> requests = new ArrayList<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            int lineNumber = 0;
            String line;
            while (requests.size() < limit && (line = in.readLine()) != null) {
                lineNumber++;
                if (line.isBlank()) {
                    continue;
                }
                TraceRequest request;
                try {
                    request = parser.parse(line);
                } catch (BadTraceLine | IllegalArgumentException e) {
                    throw new TraceFormatException(file, lineNumber, e.getMessage());
                }
                if (request != null) {
                    requests.add(request);
                }
            }
        }
        if (requests.isEmpty()) {
            throw new TraceFormatException(file, "no requests in the file");
        }
        return new Trace(String.valueOf(file.getFileName()), requests);
    }

    private static TraceLineParser parserFor(Path file) {
        String name = String.valueOf(file.getFileName()).toLowerCase(Locale.ROOT);
        if (name.endsWith(".jsonl") || name.endsWith(".json")) {
            return new MooncakeLineParser();
        }
        if (name.endsWith(".csv")) {
            return new AzureLineParser();
        }
        throw new TraceFormatException(
                file, "unknown trace format; known extensions: .jsonl and .json (Mooncake), .csv (Azure)");
    }
}
