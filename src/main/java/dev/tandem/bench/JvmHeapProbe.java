package dev.tandem.bench;

import com.sun.management.GarbageCollectorMXBean;
import com.sun.management.GcInfo;
import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The live heap of another JVM on this machine: the bench attaches to it (the attach API, module
 * {@code jdk.attach}), starts its local JMX agent and asks its {@link MemoryMXBean} for a full collection,
 * then for the heap used; or, without collecting, its collectors for the heap after their latest one. Heap used between collections says little (it sawtooths with allocation);
 * after a full GC it is what is live, and what grows minute after minute there is a leak.
 */
final class JvmHeapProbe implements AutoCloseable {
    private final JMXConnector connector;
    private final MemoryMXBean memory;
    private final List<GarbageCollectorMXBean> collectors;
    private final Set<String> heapPools;

    private JvmHeapProbe(
            JMXConnector connector,
            MemoryMXBean memory,
            List<GarbageCollectorMXBean> collectors,
            Set<String> heapPools) {
        this.connector = connector;
        this.memory = memory;
        this.collectors = collectors;
        this.heapPools = heapPools;
    }

    static JvmHeapProbe attach(long pid) throws IOException {
        String address;
        try {
            VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
            try {
                address = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
        } catch (AttachNotSupportedException e) {
            throw new IOException("cannot attach to pid " + pid + ": " + e.getMessage(), e);
        }
        JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
        MBeanServerConnection server = connector.getMBeanServerConnection();
        MemoryMXBean memory = ManagementFactory.newPlatformMXBeanProxy(
                server, ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class);
        Set<String> heapPools = new HashSet<>();
        for (MemoryPoolMXBean pool : ManagementFactory.getPlatformMXBeans(server, MemoryPoolMXBean.class)) {
            if (pool.getType() == MemoryType.HEAP) {
                heapPools.add(pool.getName());
            }
        }
        return new JvmHeapProbe(
                connector,
                memory,
                ManagementFactory.getPlatformMXBeans(server, GarbageCollectorMXBean.class),
                heapPools);
    }

    /**
     * The heap used right after the target's latest collection, whatever its kind (young, mixed, full): what
     * the minutes show without the bench collecting anything itself, so the collector's own behaviour (its
     * concurrent cycles and mixed collections) is what is measured. NaN before the first collection.
     */
    double heapAfterLastGc() {
        GcInfo latest = null;
        for (GarbageCollectorMXBean gc : collectors) {
            GcInfo info = gc.getLastGcInfo();
            if (info != null && (latest == null || info.getEndTime() > latest.getEndTime())) {
                latest = info;
            }
        }
        if (latest == null) {
            return Double.NaN;
        }
        long used = 0;
        for (Map.Entry<String, MemoryUsage> pool :
                latest.getMemoryUsageAfterGc().entrySet()) {
            if (heapPools.contains(pool.getKey())) {
                used += pool.getValue().getUsed();
            }
        }
        return used;
    }

    /**
     * A full GC ({@code System.gc()}: under G1 a stop-the-world full collection, which the target's latency
     * feels) and the heap used right after it, in bytes.
     */
    long heapAfterFullGc() {
        memory.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    @Override
    public void close() {
        try {
            connector.close();
        } catch (IOException e) {
            // the target is going away: nothing to release on this side
        }
    }
}
