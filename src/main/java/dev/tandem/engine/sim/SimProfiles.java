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

    /** A model's figures from its model card, in bf16. */
    private record Model(String name, double params, int layers, int attentionDim, int kvHeads, long weightBytes) {
        long kvBytesPerToken() {
            return 2L * layers * kvHeads * 128 * 2; // K and V, 128-wide heads, 2 bytes each
        }
    }

    /** An accelerator's data-sheet figures, and the NIC it is deployed with (200 Gb/s HDR for A100s). */
    private record Gpu(String name, double flops, double hbmBytesPerSecond, double nicBytesPerSecond) {}

    private static final Model LLAMA_8B = new Model("sim-llama-3.1-8b", 8.03e9, 32, 4096, 8, 16_060_000_000L);
    private static final Model LLAMA_70B = new Model("sim-llama-3.1-70b", 70.6e9, 80, 8192, 8, 141_200_000_000L);
    private static final Gpu H100 = new Gpu("H100 SXM 80 GB", 989e12, 3.35e12, NIC_400G);
    private static final Gpu A100 = new Gpu("A100 SXM 80 GB", 312e12, 2.04e12, NIC_400G / 2);

    static {
        add(on("llama3-8b-h100", LLAMA_8B, H100, 1, 0.5, 0.8, 1_000));
        add(on("llama3-8b-a100", LLAMA_8B, A100, 1, 0.5, 0.8, 1_000));
        add(on("llama3-70b-h100x4", LLAMA_70B, H100, 4, 0.4, 0.7, 2_000));
        add(on("llama3-70b-h100x8", LLAMA_70B, H100, 8, 0.4, 0.7, 2_000));
        // No cost at all: what is left is Tandem's own overhead (the performance benchmarks).
        add(new SimProfile(
                "zero",
                "sim-zero",
                "none (no cost)",
                131_072,
                0,
                1,
                1,
                LLAMA_8B.kvBytesPerToken(),
                0,
                0,
                1,
                0,
                1,
                0,
                kvMemory(1, LLAMA_8B.weightBytes()),
                0));
    }

    /** {@code model} tensor-parallel over {@code gpus} of {@code gpu}, one NIC per GPU. */
    private static SimProfile on(
            String name, Model model, Gpu gpu, int gpus, double mfu, double hbmEfficiency, long stepOverheadMicros) {
        return new SimProfile(
                name,
                model.name(),
                gpus + "× " + gpu.name() + (gpus > 1 ? ", tensor parallel" : ""),
                131_072,
                model.params(),
                model.layers(),
                model.attentionDim(),
                model.kvBytesPerToken(),
                model.weightBytes(),
                gpus * gpu.flops(),
                mfu,
                gpus * gpu.hbmBytesPerSecond(),
                hbmEfficiency,
                stepOverheadMicros,
                kvMemory(gpus, model.weightBytes()),
                gpus * gpu.nicBytesPerSecond());
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
