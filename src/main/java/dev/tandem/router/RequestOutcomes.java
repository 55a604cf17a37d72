package dev.tandem.router;

import dev.tandem.metrics.RouterMetrics;

/** How a request ended, as {@code tandem_requests_total{outcome}} counts it. */
final class RequestOutcomes {
    private RequestOutcomes() {}

    static RouterMetrics.Outcome of(boolean failedOver, GenerationFailure failure, String cancelReason) {
        if (cancelReason != null) {
            return RouterMetrics.Outcome.CANCELLED;
        }
        if (failure == null) {
            return failedOver ? RouterMetrics.Outcome.FAILED_OVER : RouterMetrics.Outcome.OK;
        }
        if (failure.status() == 504) {
            return RouterMetrics.Outcome.TIMEOUT;
        }
        if (failure.status() == 429) {
            return RouterMetrics.Outcome.REJECTED;
        }
        return failure.status() < 500 ? RouterMetrics.Outcome.CLIENT_ERROR : RouterMetrics.Outcome.ERROR;
    }
}
