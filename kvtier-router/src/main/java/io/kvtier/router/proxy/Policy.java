package io.kvtier.router.proxy;

import io.kvtier.router.map.KvCacheMap;
import io.kvtier.router.map.PrefixHash;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Orders the healthy engines for one request, best first (the proxy tries them in that order until one answers), and
 * says why the first was chosen. Thread-safe.
 */
public interface Policy {
    /**
     * A choice: the engines in the order to try, why the first, how many prompt tokens it was credited with, the
     * chunks kvtier holds on disk that the first engine will load (its LMCache's data keys by kvtier node: KVC.PREFETCH
     * brings them to memory before the engine asks), how many prompt tokens the first engine will compute
     * ({@code -1}: the prompt less the credited tokens) and how many seconds it will spend loading the rest (0 where
     * the policy does not say), which the router counts as that engine's pending work until the answer's first byte.
     */
    record Choice(List<EngineState> order, String reason, int predictedCachedTokens,
                  Map<String, List<String>> prefetch, int computeTokens, double loadSeconds) {
        public Choice(List<EngineState> order, String reason, int predictedCachedTokens) {
            this(order, reason, predictedCachedTokens, Map.of());
        }

        public Choice(List<EngineState> order, String reason, int predictedCachedTokens,
                      Map<String, List<String>> prefetch) {
            this(order, reason, predictedCachedTokens, prefetch, -1, 0);
        }

        /** The prompt tokens of {@code promptTokens} the first engine is expected to compute. */
        public int computeTokens(int promptTokens) {
            return computeTokens >= 0 ? Math.min(computeTokens, promptTokens)
                    : Math.max(0, promptTokens - predictedCachedTokens);
        }
    }

    Choice choose(String model, String lora, int[] tokens, List<EngineState> engines);

    /**
     * The decision log: at DEBUG, each policy that prices engines logs its prices per prompt, and the router each
     * prompt's engine and time to the answer's first byte ({@code KVTIER_DECISIONS_LOG=DEBUG}).
     */
    org.slf4j.Logger DECISIONS = org.slf4j.LoggerFactory.getLogger("io.kvtier.router.decisions");

    /** A short name for a prompt in the decision log: its tokens' hash. */
    static String fingerprint(int[] tokens) {
        return Integer.toHexString(java.util.Arrays.hashCode(tokens));
    }

    /** Called once the request was answered by {@code engine} (approx-prefix learns from it). */
    default void routed(String model, String lora, int[] tokens, EngineState engine) {
    }

    static Policy named(String name, KvCacheMap map, int maxImbalance) {
        return named(name, map, maxImbalance, null, null, null, null);
    }

    /**
     * As above; {@code kvtier} also needs the store map, how LMCache names chunks, what to price with, and the fetch
     * bandwidths measured ({@code probes}; null: {@code costs}' only).
     */
    static Policy named(String name, KvCacheMap map, int maxImbalance, io.kvtier.router.map.StoreMap store,
            io.kvtier.router.map.LmcacheSettings lmcache, StoreAwarePolicy.Costs costs, FetchProbes probes) {
        return switch (name) {
            case "kvtier" -> new StoreAwarePolicy(map, store, lmcache, costs, probes);
            case "round-robin" -> new RoundRobin();
            case "least-load" -> (model, lora, tokens, engines) -> new Choice(byLoad(engines), "least-load", 0);
            case "prefix" -> new Prefix(map, maxImbalance);
            case "approx-prefix" -> new ApproxPrefix(maxImbalance, 1 << 18);
            case "llmd" -> new LlmdScorers(map, 3, 2, 2);
            case "dynamo" -> new DynamoCost(map, 1.0);
            default -> throw new IllegalArgumentException("--policy " + name
                    + " is not one of round-robin, least-load, prefix, approx-prefix, llmd, dynamo, kvtier");
        };
    }

    /** Least loaded first; ties in turn (a rotating start), so that idle engines share new prompts. */
    static List<EngineState> byLoad(List<EngineState> engines) {
        List<EngineState> out = new ArrayList<>(engines);
        if (!out.isEmpty()) {
            java.util.Collections.rotate(out, -(int) (Ties.NEXT.getAndIncrement() % out.size()));
        }
        out.sort(Comparator.comparingDouble(EngineState::load));
        return out;
    }

    /** The rotating start of {@link #byLoad}'s ties. */
    final class Ties {
        static final AtomicLong NEXT = new AtomicLong();

        private Ties() {
        }
    }

    /** Each engine in turn. */
    final class RoundRobin implements Policy {
        private final AtomicLong next = new AtomicLong();

        @Override
        public Choice choose(String model, String lora, int[] tokens, List<EngineState> engines) {
            List<EngineState> out = new ArrayList<>(engines);
            if (!out.isEmpty()) {
                java.util.Collections.rotate(out, -(int) (next.getAndIncrement() % out.size()));
            }
            return new Choice(out, "round-robin", 0);
        }
    }

    /**
     * The engine holding the longest prefix of the prompt in GPU memory, from the KV-cache map (llm-d's precise
     * scorer); ties and prompts nobody holds go to the least loaded. A hot prefix does not pile its requests on one
     * engine: once that engine has {@code maxImbalance} more requests than the least loaded, the request goes by load.
     */
    final class Prefix implements Policy {
        private final KvCacheMap map;
        private final int maxImbalance;

        Prefix(KvCacheMap map, int maxImbalance) {
            this.map = map;
            this.maxImbalance = maxImbalance;
        }

        @Override
        public Choice choose(String model, String lora, int[] tokens, List<EngineState> engines) {
            Map<String, Integer> held = new LinkedHashMap<>();
            for (KvCacheMap.EnginePrefix p : map.lookup(model, lora, tokens)) {
                held.put(p.engine(), p.tokens("GPU"));
            }
            return byPrefix(engines, held, maxImbalance, "prefix");
        }
    }

    /** Orders by the prefix each engine holds, then load, unless the best is {@code maxImbalance} busier than the least. */
    static Choice byPrefix(List<EngineState> engines, Map<String, Integer> held, int maxImbalance, String name) {
        List<EngineState> byLoad = byLoad(engines); // one rotation of the ties per request
        if (byLoad.isEmpty()) {
            return new Choice(byLoad, name + ": no engine", 0);
        }
        List<EngineState> out = new ArrayList<>(byLoad);
        out.sort(Comparator.comparingInt((EngineState e) -> -held.getOrDefault(e.id(), 0))); // stable: load next
        EngineState best = out.get(0);
        int tokens = held.getOrDefault(best.id(), 0);
        if (tokens == 0) {
            return new Choice(byLoad, name + ": no prefix held, least load", 0);
        }
        if (best.load() - byLoad.get(0).load() > maxImbalance) {
            return new Choice(byLoad, name + ": holder overloaded, least load", 0);
        }
        return new Choice(out, name + ": longest prefix", tokens);
    }

    /**
     * Without events: the router remembers, per block of the prompts it routed, the engine it sent them to (bounded,
     * least recently used forgotten first), and credits each engine with the longest prefix it was sent (llm-d's
     * approximate scorer). It cannot see evictions, so it overestimates what busy engines still hold.
     */
    final class ApproxPrefix implements Policy {
        private static final int BLOCK = 16;
        private final int maxImbalance;
        private final Map<Long, String> sentTo;

        ApproxPrefix(int maxImbalance, int entries) {
            this.maxImbalance = maxImbalance;
            this.sentTo = new LinkedHashMap<>(1024, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, String> eldest) {
                    return size() > entries;
                }
            };
        }

        @Override
        public Choice choose(String model, String lora, int[] tokens, List<EngineState> engines) {
            long[] chain = PrefixHash.chain(PrefixHash.root(model + "\0" + (lora == null ? "" : lora)), tokens, BLOCK);
            Map<String, Integer> held = new LinkedHashMap<>();
            synchronized (sentTo) {
                // The engine the first block went to last, credited with the run of blocks it was sent after it.
                String first = chain.length == 0 ? null : sentTo.get(chain[0]);
                int n = 0;
                while (first != null && n < chain.length && first.equals(sentTo.get(chain[n]))) {
                    n++;
                }
                if (first != null) {
                    held.put(first, n * BLOCK);
                }
            }
            return byPrefix(engines, held, maxImbalance, "approx-prefix");
        }

        @Override
        public void routed(String model, String lora, int[] tokens, EngineState engine) {
            long[] chain = PrefixHash.chain(PrefixHash.root(model + "\0" + (lora == null ? "" : lora)), tokens, BLOCK);
            synchronized (sentTo) {
                for (long h : chain) {
                    sentTo.put(h, engine.id());
                }
            }
        }
    }
}
