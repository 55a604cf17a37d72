package dev.tandem.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A base port for a loopback cluster's Hazelcast members (benchmarks and tests), below the kernel's
 * ephemeral range. Hazelcast keeps dialling a member that left; a dial to a freed port inside that
 * range can be given the same port as its source, and the socket connects to itself (a TCP
 * self-connect): the member then takes itself for the departed one ("Connecting to self!") and the
 * cluster stalls for tens of seconds. No source port is ever chosen outside the ephemeral range.
 */
public final class LoopbackClusterPorts {
    /** Linux's default low end of {@code ip_local_port_range}, used when the file cannot be read. */
    static final int DEFAULT_EPHEMERAL_LOW = 32768;

    /** Above the well-known services a developer machine may run (databases, brokers, dev servers). */
    static final int LOWEST = 10_000;

    private static final int TRIES = 200;

    private LoopbackClusterPorts() {}

    /** A port {@code p} such that {@code p .. p + count - 1} are free on 127.0.0.1 now and outside the ephemeral range. */
    public static int base(int count) {
        int high = ephemeralLow() - count;
        if (high <= LOWEST) {
            throw new IllegalStateException("no room below the ephemeral port range for " + count + " ports");
        }
        for (int i = 0; i < TRIES; i++) {
            int base = ThreadLocalRandom.current().nextInt(LOWEST, high);
            if (allFree(base, count)) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " free consecutive ports found below " + ephemeralLow());
    }

    /** The low end of {@code /proc/sys/net/ipv4/ip_local_port_range}. */
    static int ephemeralLow() {
        // A reader, not Files.readString: /proc files report no size, and a sized read stops early.
        try (BufferedReader in = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            String[] range = in.readLine().trim().split("\\s+");
            return Integer.parseInt(range[0]);
        } catch (IOException | RuntimeException e) {
            return DEFAULT_EPHEMERAL_LOW;
        }
    }

    private static boolean allFree(int base, int count) {
        for (int p = base; p < base + count; p++) {
            try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
                // bound: free
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }
}
