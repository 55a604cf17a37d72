package dev.tandem.upstream;

/**
 * How busy an upstream says it is, read from its Prometheus {@code /metrics}: requests running and
 * waiting, and the share of its KV cache in use (0–1). vLLM: {@code vllm:num_requests_running},
 * {@code vllm:num_requests_waiting}, {@code vllm:kv_cache_usage_perc} (before 0.10:
 * {@code vllm:gpu_cache_usage_perc}); SGLang: {@code sglang:num_running_reqs},
 * {@code sglang:num_queue_reqs}, {@code sglang:token_usage}. Series of one name are summed (one per
 * engine or rank); a share is the highest.
 */
public record UpstreamLoad(int running, int waiting, double kvUsage) {
    public static final UpstreamLoad IDLE = new UpstreamLoad(0, 0, 0);

    public static UpstreamLoad parse(String prometheusText) {
        double running = 0;
        double waiting = 0;
        double usage = 0;
        for (String raw : prometheusText.split("\n")) {
            String line = raw.trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int nameEnd = 0;
            while (nameEnd < line.length() && line.charAt(nameEnd) != '{' && line.charAt(nameEnd) != ' ') {
                nameEnd++;
            }
            String name = line.substring(0, nameEnd);
            Double value = value(line, nameEnd);
            if (value == null) {
                continue;
            }
            switch (name) {
                case "vllm:num_requests_running", "sglang:num_running_reqs" -> running += value;
                case "vllm:num_requests_waiting", "sglang:num_queue_reqs" -> waiting += value;
                case "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage" ->
                    usage = Math.max(usage, value);
                default -> {}
            }
        }
        return new UpstreamLoad((int) Math.round(running), (int) Math.round(waiting), Math.min(1, Math.max(0, usage)));
    }

    /** The sample's value: the first field after the labels (a timestamp may follow). */
    private static Double value(String line, int nameEnd) {
        int i = nameEnd;
        if (i < line.length() && line.charAt(i) == '{') {
            int close = line.lastIndexOf('}');
            if (close < 0) {
                return null;
            }
            i = close + 1;
        }
        String[] fields = line.substring(i).trim().split("\\s+");
        if (fields.length == 0 || fields[0].isEmpty()) {
            return null;
        }
        try {
            double v = Double.parseDouble(fields[0]);
            return Double.isFinite(v) ? v : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
