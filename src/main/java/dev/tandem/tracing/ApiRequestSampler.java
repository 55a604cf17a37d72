package dev.tandem.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingResult;
import java.util.List;

/**
 * Samples requests, not probes: Vert.x's HTTP server starts a span for every request, and a scrape of
 * {@code /metrics} or a probe of {@code /health} every few seconds would fill a trace store with noise.
 * Server spans of other paths than the API's ({@code /v1/...}) are dropped; everything else is
 * parent-based with {@code tracing.sample-rate} for new traces (Vert.x sets the path before the span
 * starts, so the sampler sees it).
 */
final class ApiRequestSampler implements Sampler {
    private static final AttributeKey<String> URL_PATH = AttributeKey.stringKey("url.path");

    private final Sampler requests;

    ApiRequestSampler(double rate) {
        this.requests = Sampler.parentBased(Sampler.traceIdRatioBased(rate));
    }

    @Override
    public SamplingResult shouldSample(
            Context parent, String traceId, String name, SpanKind kind, Attributes attributes, List<LinkData> links) {
        if (kind == SpanKind.SERVER) {
            String path = attributes.get(URL_PATH);
            if (path != null && !path.startsWith("/v1/")) {
                return SamplingResult.drop();
            }
        }
        return requests.shouldSample(parent, traceId, name, kind, attributes, links);
    }

    @Override
    public String getDescription() {
        return "ApiRequestSampler{" + requests.getDescription() + "}";
    }
}
