package io.kvtier.router.proxy;

import io.kvtier.events.StoreEvent;
import io.kvtier.router.map.KvCacheMap;
import io.kvtier.router.map.LmcacheSettings;
import io.kvtier.router.map.StoreMap;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code kvtier} policy: each engine is priced by the time to first token it would give this prompt and by what
 * the prompt costs its decoding later; of the engines whose first token is within {@code ttftSlack} of the fastest,
 * the cheapest goes first (the rest follow, cheapest first, for retries):
 * <pre>
 *   loads(e) = reload(e's CPU-tier prefix beyond its GPU prefix) + fetch(chunks kvtier holds beyond both)
 *   first(e) = max(loads(e) > 0 ? pendingLoads(e) + loads(e) : 0, pendingPrefill(e))
 *            + prefill(tokens none holds) + load(e) * loadSeconds
 *   cost(e)  = first(e) + decodeWeight * decode(e)
 * </pre>
 * where {@code reload} is the engine's own CPU tier (vLLM's OffloadingConnector) copied back at
 * {@link #CPU_RELOAD_FACTOR} times the prefill rate.
 * {@code fetch} sums each chunk's bytes over the bandwidth of the node and tier it is in (memory or disk): measured
 * ({@link FetchProbes}) where a sample exists, else the configured one; {@code prefill} is
 * tokens over the engine's prefill rate. A prompt waits behind the requests the router sent the engine that have not
 * answered yet: its loads behind theirs ({@code pendingLoads}, the seconds of reload and fetch estimated for them,
 * {@link EngineState#pendingLoadSeconds()}: they share the engine's link), its prefill behind theirs and behind its
 * own load ({@code pendingPrefill}, their tokens to compute at the prefill rate,
 * {@link EngineState#pendingPrefillTokens()}: chunked prefill shares a step's budget first come, first served).
 * {@code decode} is Dynamo's decode term, in the same seconds: the prompt tokens in flight there, this prompt's with
 * them, at the prefill rate; it stands for what a prompt placed there costs in decode bandwidth and GPU memory, which
 * the time to first token does not show, and {@code decodeWeight} (0.3 by default) says how much of it counts. The
 * slack keeps the decode term from trading a later first token for balance (a prompt leaves the engine holding its
 * prefix only when another gives its first token about as soon); within it, the decode term places new conversations
 * where decoding is lightest. The
 * GPU prefix comes from the engines' KV events, the chunks from the kvtier
 * nodes' store events and the prompt's LMCache chunk keys. So a prompt whose prefix the shared pool holds is not tied to
 * the one busy engine that has it in GPU memory: any idle engine can fetch it, at a price the policy knows; and a
 * prompt nobody holds goes where the queue is shortest.
 */
public final class StoreAwarePolicy implements Policy {
    /**
     * What the policy prices with; bandwidths in bytes per second. {@code bytesScale}: the share of each chunk's real
     * bytes the nodes hold (1 in a real fleet; an emulated one, {@code bench fleet --kv-bytes-scale}, moves a share of
     * them and models the rest), so that a chunk's fetch is priced for its real bytes. {@code decodeWeight}: the share
     * of a prefill token's price each prompt token in flight at an engine costs (Dynamo's decode term; 1 is Dynamo's
     * balance, 0 prices the time to first token alone). {@code ttftSlack}: seconds of first token the decode term may
     * trade (infinite: none is kept, cost alone orders).
     */
    public record Costs(double prefillTokensPerSecond, double memoryBytesPerSecond, double diskBytesPerSecond,
            double loadSeconds, double bytesScale, double decodeWeight, double ttftSlack) {
        /** The decode weight by default: see docs/routing.md, "Policies", for the sweep it comes from. */
        public static final double DECODE_WEIGHT = 0.3;
        /** The first-token slack by default, seconds: see docs/routing.md, "Policies". */
        public static final double TTFT_SLACK = 0.1;

        public Costs {
            if (!(prefillTokensPerSecond > 0 && memoryBytesPerSecond > 0 && diskBytesPerSecond > 0
                    && loadSeconds >= 0 && bytesScale > 0 && bytesScale <= 1 && decodeWeight >= 0
                    && decodeWeight <= 100 && ttftSlack >= 0)) {
                throw new IllegalArgumentException("prefill rate and bandwidths must be positive, the load cost not "
                        + "negative, the bytes scale within (0, 1], the decode weight within 0..100, the first-token"
                        + " slack not negative");
            }
        }

        public Costs(double prefillTokensPerSecond, double memoryBytesPerSecond, double diskBytesPerSecond,
                double loadSeconds, double bytesScale, double decodeWeight) {
            this(prefillTokensPerSecond, memoryBytesPerSecond, diskBytesPerSecond, loadSeconds, bytesScale,
                    decodeWeight, Double.POSITIVE_INFINITY);
        }

        public Costs(double prefillTokensPerSecond, double memoryBytesPerSecond, double diskBytesPerSecond,
                double loadSeconds) {
            this(prefillTokensPerSecond, memoryBytesPerSecond, diskBytesPerSecond, loadSeconds, 1, 0);
        }

        public static Costs defaults() {
            return new Costs(10_000, 4e9, 1.2e9, 0.05, 1, DECODE_WEIGHT, TTFT_SLACK);
        }
    }

    /** How many times faster than recomputing an engine reloads blocks from its own CPU tier. */
    static final double CPU_RELOAD_FACTOR = 5;
    private final KvCacheMap gpu;
    private final StoreMap store;
    private final LmcacheSettings lmcache;
    private final Costs costs;
    private final FetchProbes probes;

    StoreAwarePolicy(KvCacheMap gpu, StoreMap store, LmcacheSettings lmcache, Costs costs, FetchProbes probes) {
        this.gpu = gpu;
        this.store = store;
        this.lmcache = lmcache;
        this.costs = costs;
        this.probes = probes;
    }

    /** The bandwidth a chunk held as {@code h} is fetched at: measured on its node and tier, else configured. */
    double bytesPerSecond(StoreMap.Held h) {
        double measured = probes == null ? Double.NaN : probes.bytesPerSecond(h.node(), h.tier());
        if (measured > 0) {
            return measured;
        }
        return h.tier() == StoreEvent.Tier.MEMORY ? costs.memoryBytesPerSecond() : costs.diskBytesPerSecond();
    }

    @Override
    public Choice choose(String model, String lora, int[] tokens, List<EngineState> engines) {
        List<EngineState> byLoad = Policy.byLoad(engines);
        if (byLoad.isEmpty()) {
            return new Choice(byLoad, "kvtier: no engine", 0);
        }
        Map<String, Integer> held = new HashMap<>();
        Map<String, Integer> cpu = new HashMap<>();
        for (KvCacheMap.EnginePrefix p : gpu.lookup(model, lora, tokens)) {
            held.put(p.engine(), p.tokens("GPU"));
            cpu.put(p.engine(), p.tokens("CPU"));
        }
        List<String> keys = lora == null ? lmcache.keys(model, tokens) : List.of();
        List<StoreMap.Held> chunks = keys.isEmpty() ? List.of() : store.lookup(keys);
        int chunk = lmcache.chunkSize();
        Map<String, Priced> priced = new HashMap<>();
        double rate = costs.prefillTokensPerSecond();
        for (EngineState e : byLoad) {
            Estimate x = estimate(tokens.length, held.getOrDefault(e.id(), 0), cpu.getOrDefault(e.id(), 0), chunks,
                    chunk);
            double first = x.queued(e.pendingLoadSeconds(), e.pendingPrefillTokens() / rate)
                    + e.load() * costs.loadSeconds();
            priced.put(e.id(), new Priced(x, first,
                    first + costs.decodeWeight() * (e.activeTokens() + tokens.length) / rate));
        }
        double slack = priced.values().stream().mapToDouble(Priced::first).min().orElse(0) + costs.ttftSlack();
        List<EngineState> out = new ArrayList<>(byLoad);
        // Within the slack of the fastest first token, the least cost; the rest after them (stable: ties keep the
        // load order).
        out.sort(Comparator.comparingInt((EngineState e) -> priced.get(e.id()).first() <= slack ? 0 : 1)
                .thenComparingDouble(e -> priced.get(e.id()).cost()));
        EngineState best = out.get(0);
        int g = held.getOrDefault(best.id(), 0);
        int s = chunks.size() * chunk;
        if (Policy.DECISIONS.isDebugEnabled()) {
            StringBuilder b = new StringBuilder();
            for (EngineState e : out) {
                Priced pr = priced.get(e.id());
                b.append(String.format(java.util.Locale.ROOT, " %s[gpu %d cpu %d load %.3f s compute %d active %d"
                                + " pending %d+%.3f s in %.0f kv %.2f: first %.3f s, cost %.3f s]", e.id(),
                        held.getOrDefault(e.id(), 0), cpu.getOrDefault(e.id(), 0), pr.alone().loadSeconds(),
                        pr.alone().computeTokens(), e.activeTokens(), e.pendingPrefillTokens(),
                        e.pendingLoadSeconds(), e.load(), e.kvUsage(), pr.first(), pr.cost()));
            }
            Policy.DECISIONS.debug("prompt {} ({} tokens, {} in kvtier):{}", Policy.fingerprint(tokens),
                    tokens.length, s, b);
        }
        String reason = s > g ? "kvtier: store prefix" : g > 0 ? "kvtier: gpu prefix" : "kvtier: least cost";
        Estimate x = priced.get(best.id()).alone();
        return new Choice(out, reason, g, prefetch(keys, chunks, chunk, g), x.computeTokens(), x.loadSeconds());
    }

    /** One engine's prices for a prompt: on its own, its first token behind the engine's queue, and with decode. */
    private record Priced(Estimate alone, double first, double cost) {
    }

    /**
     * What a prompt costs an engine on its own: seconds of loads (its CPU tier's reload and kvtier's fetches), the
     * tokens it computes and their seconds.
     */
    record Estimate(double loadSeconds, int computeTokens, double prefillSeconds) {
        /** The whole, nothing ahead of it. */
        double alone() {
            return loadSeconds + prefillSeconds;
        }

        /**
         * Behind {@code loadsAhead} seconds of loads and {@code prefillAhead} seconds of prefill: its own loads, if
         * any, wait behind the others' (a request without loads is not held by theirs: vLLM's connectors load
         * asynchronously), its prefill behind both.
         */
        double queued(double loadsAhead, double prefillAhead) {
            return Math.max(loadSeconds > 0 ? loadsAhead + loadSeconds : 0, prefillAhead) + prefillSeconds;
        }
    }

    /**
     * The data keys of the chunks the chosen engine will load from kvtier's disk: held on disk, beyond the
     * {@code gpuTokens} its GPU holds, by node.
     */
    static Map<String, List<String>> prefetch(List<String> keys, List<StoreMap.Held> chunks, int chunkTokens,
                                              int gpuTokens) {
        Map<String, List<String>> out = new HashMap<>();
        for (int i = 0; i < chunks.size(); i++) {
            StoreMap.Held h = chunks.get(i);
            if (h.tier() == StoreEvent.Tier.DISK && (long) (i + 1) * chunkTokens > gpuTokens) {
                out.computeIfAbsent(h.node(), n -> new ArrayList<>()).add(keys.get(i) + KV_BYTES);
            }
        }
        return out;
    }

    /** The suffix of a chunk's data key, LMCache's {@code kv_bytes} (its other key, {@code metadata}, is small). */
    static final String KV_BYTES = "kv_bytes";

    /** The estimated seconds to the first token on an engine holding {@code gpuTokens} with {@code load}. */
    double cost(int promptTokens, int gpuTokens, List<StoreMap.Held> chunks, int chunkTokens, double load) {
        return cost(promptTokens, gpuTokens, 0, chunks, chunkTokens, load);
    }

    /** As above, the engine's own CPU tier holding {@code cpuTokens} of the prompt. */
    double cost(int promptTokens, int gpuTokens, int cpuTokens, List<StoreMap.Held> chunks, int chunkTokens,
            double load) {
        return estimate(promptTokens, gpuTokens, cpuTokens, chunks, chunkTokens).alone() + load * costs.loadSeconds();
    }

    Estimate estimate(int promptTokens, int gpuTokens, int cpuTokens, List<StoreMap.Held> chunks, int chunkTokens) {
        int local = Math.max(gpuTokens, cpuTokens);
        double reload = Math.max(0, cpuTokens - gpuTokens) / (costs.prefillTokensPerSecond() * CPU_RELOAD_FACTOR);
        double fetch = 0;
        for (int i = 0; i < chunks.size(); i++) {
            if ((long) (i + 1) * chunkTokens > local) { // a chunk the engine does not wholly hold is fetched
                StoreMap.Held h = chunks.get(i);
                fetch += h.bytes() / costs.bytesScale() / bytesPerSecond(h);
            }
        }
        long covered = Math.max(local, (long) chunks.size() * chunkTokens);
        int compute = (int) Math.max(0, promptTokens - covered);
        return new Estimate(reload + fetch, compute, compute / costs.prefillTokensPerSecond());
    }
}
