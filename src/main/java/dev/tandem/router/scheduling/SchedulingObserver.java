package dev.tandem.router.scheduling;

/** Sees what a profile does — how long each plugin took, whom it chose — without changing it (metrics). */
public interface SchedulingObserver {
  SchedulingObserver NONE = new SchedulingObserver() {
    @Override
    public void pluginTimed(String profile, String plugin, long nanos) {
    }

    @Override
    public void chosen(String profile, String workerId) {
    }
  };

  void pluginTimed(String profile, String plugin, long nanos);

  void chosen(String profile, String workerId);
}
