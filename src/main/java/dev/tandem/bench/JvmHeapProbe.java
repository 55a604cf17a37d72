package dev.tandem.bench;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The live heap of another JVM on this machine: the bench attaches to it (the attach API, module
 * {@code jdk.attach}), starts its local JMX agent and asks its {@link MemoryMXBean} for a full collection,
 * then for the heap used. Heap used between collections says little (it sawtooths with allocation);
 * after a full GC it is what is live, and what grows minute after minute there is a leak.
 */
final class JvmHeapProbe implements AutoCloseable {
    private final JMXConnector connector;
    private final MemoryMXBean memory;

    private JvmHeapProbe(JMXConnector connector, MemoryMXBean memory) {
        this.connector = connector;
        this.memory = memory;
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
        MemoryMXBean memory = ManagementFactory.newPlatformMXBeanProxy(
                connector.getMBeanServerConnection(), ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class);
        return new JvmHeapProbe(connector, memory);
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
