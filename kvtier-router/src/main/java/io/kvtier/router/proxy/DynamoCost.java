package io.kvtier.router.proxy;

import io.kvtier.router.map.KvCacheMap;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The {@code dynamo} policy: NVIDIA Dynamo's KV router cost, in blocks of the engine's size,
 * <pre>
 *   cost(e) = overlapWeight * prefill_blocks(e) + decode_blocks(e)
 *   prefill_blocks(e) = (prompt tokens - tokens e holds in GPU memory) / block
 *   decode_blocks(e)  = (prompt tokens of the requests in flight at e, as the router sent them, + this prompt) / block
 * </pre>
 * the cheapest first at temperature 0 (Dynamo's default, with an overlap weight of 1); above 0 the first is drawn
 * with probability {@code softmax(-cost / (temperature * max cost))}, and the rest follow by cost.
 */
final class DynamoCost implements Policy {
    private static final int DEFAULT_BLOCK = 16;
    private final KvCacheMap map;
    private final double overlapWeight;
    private final double temperature;

    DynamoCost(KvCacheMap map, double overlapWeight, double temperature) {
        this.map = map;
        this.overlapWeight = overlapWeight;
        this.temperature = temperature;
    }

    @Override
    public Choice choose(String model, String lora, int[] tokens, List<EngineState> engines) {
        List<EngineState> byLoad = Policy.byLoad(engines);
        if (byLoad.isEmpty()) {
            return new Choice(byLoad, "dynamo: no engine", 0);
        }
        Map<String, Integer> held = new HashMap<>();
        int block = DEFAULT_BLOCK;
        for (KvCacheMap.EnginePrefix p : map.lookup(model, lora, tokens)) {
            held.put(p.engine(), p.tokens("GPU"));
            block = p.blockSize();
        }
        Map<String, Double> cost = new HashMap<>();
        for (EngineState e : byLoad) {
            double prefill = Math.max(0, tokens.length - held.getOrDefault(e.id(), 0)) / (double) block;
            double decode = (e.activeTokens() + tokens.length) / (double) block;
            cost.put(e.id(), overlapWeight * prefill + decode);
        }
        List<EngineState> out = new ArrayList<>(byLoad);
        out.sort(Comparator.comparingDouble(e -> cost.get(e.id())));
        if (temperature > 0 && out.size() > 1) {
            double max = cost.values().stream().mapToDouble(Double::doubleValue).max().orElse(1);
            double[] w = new double[out.size()];
            double sum = 0;
            for (int i = 0; i < w.length; i++) {
                w[i] = Math.exp(-cost.get(out.get(i).id()) / (temperature * Math.max(max, 1e-9)));
                sum += w[i];
            }
            double r = ThreadLocalRandom.current().nextDouble(sum);
            int pick = 0;
            while (pick < w.length - 1 && (r -= w[pick]) > 0) {
                pick++;
            }
            out.add(0, out.remove(pick));
        }
        int credited = held.getOrDefault(out.get(0).id(), 0);
        return new Choice(out, credited > 0 ? "dynamo: cost, prefix held" : "dynamo: cost, no prefix held",
                credited);
    }
}
