package dev.tandem.logging;

/**
 * The fields of a log line about one request, passed as the record's parameter: the text format shows
 * them in the message already, the JSON format ({@code logging.format: json}) writes them as
 * {@code request_id} and {@code trace_id} so that a log store can join lines to a request and its trace.
 *
 * @param traceId null when the request is not traced
 */
public record LogFields(long requestId, String traceId) {}
