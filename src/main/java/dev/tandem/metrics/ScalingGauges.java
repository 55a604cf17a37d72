package dev.tandem.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The scaling signals on a router: {@code tandem_scaling_recommended_workers{model,role}} (role {@code prefill}
 * or {@code decode}) and {@code tandem_scaling_pd_ratio{model}}. Labels are model names (bounded by the models
 * served) and the two roles; a model's gauges go when it has no worker left. {@link #update} runs on the
 * router's context; scrapes read the latest values from any thread.
 */
public final class ScalingGauges {
    /** One model's recommendation. */
    public record Values(int prefillWorkers, int decodeWorkers, double pdRatio) {}

    private final MeterRegistry registry;
    private final Map<String, List<Meter>> meters = new HashMap<>();
    private volatile Map<String, Values> current = Map.of();

    public ScalingGauges(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The latest recommendation of every model served; models not in it lose their gauges. */
    public void update(Map<String, Values> byModel) {
        current = Map.copyOf(byModel);
        for (String model : byModel.keySet()) {
            meters.computeIfAbsent(model, this::register);
        }
        for (String model : List.copyOf(meters.keySet())) {
            if (!byModel.containsKey(model)) {
                meters.remove(model).forEach(registry::remove);
            }
        }
    }

    private List<Meter> register(String model) {
        return List.of(
                workers(model, "prefill", Values::prefillWorkers),
                workers(model, "decode", Values::decodeWorkers),
                Gauge.builder("tandem.scaling.pd.ratio", this, g -> g.value(model, Values::pdRatio))
                        .tag("model", model)
                        .description("recommended prefill workers per recommended decode worker")
                        .register(registry));
    }

    private Meter workers(String model, String role, ToDoubleFunction<Values> f) {
        return Gauge.builder("tandem.scaling.recommended.workers", this, g -> g.value(model, f))
                .tag("model", model)
                .tag("role", role)
                .description("workers of this role the model's current load needs under the scaling targets")
                .register(registry);
    }

    private double value(String model, ToDoubleFunction<Values> f) {
        Values v = current.get(model);
        return v == null ? Double.NaN : f.applyAsDouble(v);
    }
}
