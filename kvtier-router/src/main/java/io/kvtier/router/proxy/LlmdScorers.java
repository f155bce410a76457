package io.kvtier.router.proxy;

import io.kvtier.router.map.KvCacheMap;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code llmd} policy: llm-d's inference scheduler as its precise-prefix guide configures it, a weighted sum of
 * three scorers, each from 0 to 1, and the highest total first (ties keep the load order, as a random pick would
 * spread them):
 * <ul>
 *   <li>precise prefix cache (weight 3): the prompt tokens an engine holds by its KV events, GPU blocks counted whole
 *       and CPU-tier blocks beyond them at 0.8 (llm-d's default medium weights), over the most any engine holds;</li>
 *   <li>KV-cache utilisation (weight 2): {@code 1 - kv_cache_usage_perc};</li>
 *   <li>queue (weight 2): {@code 1 - (waiting - min) / (max - min)} over the engines, 1 where all wait alike.</li>
 * </ul>
 */
final class LlmdScorers implements Policy {
    static final double CPU_WEIGHT = 0.8;
    private final KvCacheMap map;
    private final double prefixWeight;
    private final double kvWeight;
    private final double queueWeight;

    LlmdScorers(KvCacheMap map, double prefixWeight, double kvWeight, double queueWeight) {
        this.map = map;
        this.prefixWeight = prefixWeight;
        this.kvWeight = kvWeight;
        this.queueWeight = queueWeight;
    }

    /** The tokens credited to each engine: its GPU prefix, and its CPU prefix beyond that at {@code cpuWeight}. */
    static Map<String, Double> held(KvCacheMap map, String model, String lora, int[] tokens, double cpuWeight) {
        Map<String, Double> held = new HashMap<>();
        for (KvCacheMap.EnginePrefix p : map.lookup(model, lora, tokens)) {
            int gpu = p.tokens("GPU");
            int cpu = Math.max(0, p.tokens("CPU") - gpu);
            held.put(p.engine(), gpu + cpuWeight * cpu);
        }
        return held;
    }

    @Override
    public Choice choose(String model, String lora, int[] tokens, List<EngineState> engines) {
        List<EngineState> byLoad = Policy.byLoad(engines);
        if (byLoad.isEmpty()) {
            return new Choice(byLoad, "llmd: no engine", 0);
        }
        Map<String, Double> held = held(map, model, lora, tokens, CPU_WEIGHT);
        double most = held.values().stream().mapToDouble(Double::doubleValue).max().orElse(0);
        double minQueue = byLoad.stream().mapToDouble(EngineState::waiting).min().orElse(0);
        double maxQueue = byLoad.stream().mapToDouble(EngineState::waiting).max().orElse(0);
        Map<String, Double> score = new HashMap<>();
        for (EngineState e : byLoad) {
            double prefix = most > 0 ? held.getOrDefault(e.id(), 0.0) / most : 0;
            double kv = 1 - Math.min(1, Math.max(0, e.kvUsage()));
            double queue = maxQueue > minQueue ? 1 - (e.waiting() - minQueue) / (maxQueue - minQueue) : 1;
            score.put(e.id(), prefixWeight * prefix + kvWeight * kv + queueWeight * queue);
        }
        List<EngineState> out = new ArrayList<>(byLoad);
        out.sort(Comparator.comparingDouble((EngineState e) -> -score.get(e.id())));
        double best = held.getOrDefault(out.get(0).id(), 0.0);
        return new Choice(out, best > 0 ? "llmd: scorers, prefix held" : "llmd: scorers, no prefix held",
                (int) best);
    }
}
