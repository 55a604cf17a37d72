package dev.tandem.bench;

import java.util.List;

/** A cluster one policy's replay runs against: sim workers direct, or sim vLLM instances behind upstream workers. */
interface BenchCluster extends AutoCloseable {
    /** The routers' HTTP ports, the replay's requests spread over them. */
    List<Integer> httpPorts();

    /** The model the requests name. */
    String model();

    /** KV bytes the routers saw moved between workers (in the simulated model's bytes). */
    long kvBytesMoved();

    /** Requests whose decode worker prefilled the prompt itself. */
    long localPrefills();

    /** Where the time went, for the console. */
    String timings(double timeScale);

    @Override
    void close();

    /** Starts the cluster a run's {@code --via} names. */
    static BenchCluster start(SimCluster.Shape shape, String policy) {
        return shape.viaUpstream() ? ViaUpstreamCluster.start(shape, policy) : SimCluster.start(shape, policy);
    }
}
