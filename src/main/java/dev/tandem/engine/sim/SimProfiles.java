package dev.tandem.engine.sim;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The named profiles. Figures: NVIDIA H100 SXM and A100 SXM data sheets (dense BF16 989 / 312 TFLOP/s,
 * HBM 3.35 / 2.04 TB/s, 80 GB), Meta's Llama 3.1 model cards (8B: 32 layers, 4096 wide, 8 KV heads of
 * 128; 70B: 80 layers, 8192 wide, 8 KV heads of 128; 128K context), a 400 Gb/s RDMA NIC per worker
 * (ConnectX-7 / NDR InfiniBand, as Mooncake's and Dynamo's deployments use). Prefill reaches half the
 * peak and decode 80% of the bandwidth (typical of vLLM/SGLang at these sizes); 90% of memory is used,
 * as vLLM's default, with 2 GB per GPU for activations.
 */
public final class SimProfiles {
    private static final double GB = 1e9;
    private static final double NIC_400G = 50 * GB;

    private static final Map<String, SimProfile> PROFILES = new LinkedHashMap<>();

    static {
        add(new SimProfile(
                "llama3-8b-h100",
                "sim-llama-3.1-8b",
                "1× H100 SXM 80 GB",
                131_072,
                8.03e9,
                32,
                4096,
                2L * 32 * 8 * 128 * 2,
                16_060_000_000L,
                989e12,
                0.5,
                3.35e12,
                0.8,
                1_000,
                kvMemory(1, 16_060_000_000L),
                NIC_400G));
        add(new SimProfile(
                "llama3-8b-a100",
                "sim-llama-3.1-8b",
                "1× A100 SXM 80 GB",
                131_072,
                8.03e9,
                32,
                4096,
                2L * 32 * 8 * 128 * 2,
                16_060_000_000L,
                312e12,
                0.5,
                2.04e12,
                0.8,
                1_000,
                kvMemory(1, 16_060_000_000L),
                NIC_400G / 2));
        add(new SimProfile(
                "llama3-70b-h100x4",
                "sim-llama-3.1-70b",
                "4× H100 SXM 80 GB, tensor parallel",
                131_072,
                70.6e9,
                80,
                8192,
                2L * 80 * 8 * 128 * 2,
                141_200_000_000L,
                4 * 989e12,
                0.4,
                4 * 3.35e12,
                0.7,
                2_000,
                kvMemory(4, 141_200_000_000L),
                4 * NIC_400G));
        add(new SimProfile(
                "llama3-70b-h100x8",
                "sim-llama-3.1-70b",
                "8× H100 SXM 80 GB, tensor parallel",
                131_072,
                70.6e9,
                80,
                8192,
                2L * 80 * 8 * 128 * 2,
                141_200_000_000L,
                8 * 989e12,
                0.4,
                8 * 3.35e12,
                0.7,
                2_000,
                kvMemory(8, 141_200_000_000L),
                8 * NIC_400G));
        // No cost at all: what is left is Tandem's own overhead (the performance benchmarks).
        add(new SimProfile(
                "zero",
                "sim-zero",
                "none (no cost)",
                131_072,
                0,
                1,
                1,
                2L * 32 * 8 * 128 * 2,
                0,
                0,
                1,
                0,
                1,
                0,
                kvMemory(1, 16_060_000_000L),
                0));
    }

    private SimProfiles() {}

    private static void add(SimProfile p) {
        PROFILES.put(p.name(), p);
    }

    /** KV room of {@code gpus} 80 GB GPUs at 90% use, after the weights and 2 GB per GPU of activations. */
    private static long kvMemory(int gpus, long weightBytes) {
        return (long) (gpus * (0.9 * 80 * GB - 2 * GB)) - weightBytes;
    }

    public static final String DEFAULT = "llama3-8b-h100";

    public static List<String> names() {
        return List.copyOf(PROFILES.keySet());
    }

    /** The profile of that name; an unknown name is an IllegalArgumentException listing the known ones. */
    public static SimProfile named(String name) {
        SimProfile p = PROFILES.get(name);
        if (p == null) {
            throw new IllegalArgumentException(
                    "unknown sim profile '" + name + "'; known: " + String.join(", ", names()));
        }
        return p;
    }
}
