package io.kvtier.router.proxy;

import io.kvtier.router.map.KvCacheMap;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code dynamo} policy: NVIDIA Dynamo's KV router cost, in blocks of the engine's size,
 * <pre>
 *   cost(e) = overlapWeight * prefill_blocks(e) + decode_blocks(e)
 *   prefill_blocks(e) = (prompt tokens - tokens e holds in GPU memory) / block
 *   decode_blocks(e)  = (prompt tokens of the requests in flight at e, as the router sent them, + this prompt) / block
 * </pre>
 * the cheapest first, as Dynamo chooses at its default temperature 0 (with an overlap weight of 1); its sampling at a
 * temperature above 0 is not offered.
 */
final class DynamoCost implements Policy {
    private static final int DEFAULT_BLOCK = 16;
    private final KvCacheMap map;
    private final double overlapWeight;

    DynamoCost(KvCacheMap map, double overlapWeight) {
        this.map = map;
        this.overlapWeight = overlapWeight;
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
        int credited = held.getOrDefault(out.get(0).id(), 0);
        return new Choice(out, credited > 0 ? "dynamo: cost, prefix held" : "dynamo: cost, no prefix held",
                credited);
    }
}
