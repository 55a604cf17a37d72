package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.RepeatedTest;

/** A loopback cluster's member ports: free, and never where the kernel picks a dial's source port. */
class LoopbackClusterPortsTest {

    @RepeatedTest(5)
    void aBaseLeavesEveryPortBelowTheEphemeralRangeAndFree() throws IOException {
        int count = 32;
        int base = LoopbackClusterPorts.base(count);
        int low = LoopbackClusterPorts.ephemeralLow();
        assertTrue(base >= LoopbackClusterPorts.LOWEST, "base " + base);
        assertTrue(
                base + count <= low,
                "ports " + base + ".." + (base + count - 1) + " reach the ephemeral range from " + low);
        for (int p = base; p < base + count; p++) {
            try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
                assertTrue(s.isBound());
            }
        }
    }
}
