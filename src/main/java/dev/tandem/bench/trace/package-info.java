/**
 * Public request traces for {@code tandem bench route}: reading Mooncake JSONL and Azure CSV files
 * ({@link dev.tandem.bench.trace.TraceReader}), turning a request into prompt token ids whose shared
 * prefixes are the trace's ({@link dev.tandem.bench.trace.TraceTokens}), and the hit rate one infinite
 * cache shared by every worker would reach on them ({@link dev.tandem.bench.trace.IdealHitRate}) — the
 * ceiling any routing policy is measured against.
 */
package dev.tandem.bench.trace;
