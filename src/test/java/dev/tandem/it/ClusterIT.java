package dev.tandem.it;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * What every multi-JVM test class shares: one cluster per class (started in the subclass's
 * {@code @BeforeAll}), its nodes' log tails printed when a test fails, every JVM killed at the end.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ClusterIT {
    protected TandemCluster cluster;

    @RegisterExtension
    final TestWatcher logsOnFailure = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            if (cluster != null) {
                System.err.println(context.getDisplayName() + " failed; node logs:\n" + cluster.describe(40));
            }
        }
    };

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A worker's registry entry as a router sees it, or null. */
    protected JsonObject worker(TandemProcess router, String workerId) {
        for (Object o : cluster.workers(router)) {
            JsonObject w = (JsonObject) o;
            if (workerId.equals(w.getString("worker_id"))) {
                return w;
            }
        }
        return null;
    }
}
