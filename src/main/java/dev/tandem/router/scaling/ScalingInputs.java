package dev.tandem.router.scaling;

import dev.tandem.protocol.WorkerDescriptor;
import dev.tandem.protocol.WorkerRole;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Turns the registry's workers and a router's token window into one {@link ScalingSnapshot} per model. */
public final class ScalingInputs {
    private ScalingInputs() {}

    /**
     * A snapshot per model that has a registered worker. Draining workers are not counted as serving, but what
     * they still hold (queued prompts, sequences, KV) is load the pools carry until they leave.
     */
    public static List<ScalingSnapshot> snapshots(
            List<WorkerDescriptor> workers, Map<String, TokenWindow.Rates> rates) {
        Map<String, List<WorkerDescriptor>> byModel = new TreeMap<>();
        for (WorkerDescriptor w : workers) {
            byModel.computeIfAbsent(w.model(), m -> new ArrayList<>()).add(w);
        }
        List<ScalingSnapshot> out = new ArrayList<>(byModel.size());
        byModel.forEach((model, ws) -> out.add(snapshot(model, ws, rates.getOrDefault(model, TokenWindow.Rates.NONE))));
        return out;
    }

    static ScalingSnapshot snapshot(String model, List<WorkerDescriptor> workers, TokenWindow.Rates rates) {
        long queued = 0;
        int prefill = 0;
        double rateSum = 0;
        int rated = 0;
        int decode = 0;
        long sequences = 0;
        long kvUsed = 0;
        long batchSum = 0;
        long capacitySum = 0;
        int decodeSeen = 0;
        for (WorkerDescriptor w : workers) {
            if (w.role() == WorkerRole.PREFILL) {
                queued += w.load().queuedPrefillTokens();
                prefill += w.draining() ? 0 : 1;
                if (w.load().prefillTokensPerSecond() > 0) {
                    rateSum += w.load().prefillTokensPerSecond();
                    rated++;
                }
            } else {
                decode += w.draining() ? 0 : 1;
                sequences += w.load().activeSequences();
                kvUsed += w.load().kvBytesUsed();
                batchSum += w.maxBatch();
                capacitySum += w.load().kvBytesCapacity();
                decodeSeen++;
            }
        }
        return new ScalingSnapshot(
                model,
                rates.uncachedPromptTokensPerSec(),
                rates.outputTokensPerSec(),
                queued,
                prefill,
                rated == 0 ? 0 : rateSum / rated,
                decode,
                sequences,
                decodeSeen == 0 ? 0 : (int) (batchSum / decodeSeen),
                kvUsed,
                decodeSeen == 0 ? 0 : capacitySum / decodeSeen);
    }
}
