package dev.tandem.router.scheduling;

/** Sees what a profile does — how long each plugin took, whom it chose — without changing it (metrics). */
public interface SchedulingObserver {
    SchedulingObserver NONE = of((profile, plugin, nanos) -> {}, (profile, workerId) -> {});

    void pluginTimed(String profile, String plugin, long nanos);

    void chosen(String profile, String workerId);

    /** How long one plugin took for one decision. */
    @FunctionalInterface
    interface PluginTimer {
        void pluginTimed(String profile, String plugin, long nanos);
    }

    /** Which worker a profile chose. */
    @FunctionalInterface
    interface ChoiceListener {
        void chosen(String profile, String workerId);
    }

    /** An observer from its two halves (e.g. a meter holder's methods). */
    static SchedulingObserver of(PluginTimer timer, ChoiceListener choices) {
        return new SchedulingObserver() {
            @Override
            public void pluginTimed(String profile, String plugin, long nanos) {
                timer.pluginTimed(profile, plugin, nanos);
            }

            @Override
            public void chosen(String profile, String workerId) {
                choices.chosen(profile, workerId);
            }
        };
    }
}
