package io.kvtier.bench.fleet;

import io.kvtier.router.sim.Gpu;
import io.kvtier.router.sim.ModeledEngine;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * One fleet benchmark run: the engines (model, GPU, tensor parallelism, how many), the configurations to compare
 * (offload tiers x routing), the rates to sweep, the workload and the kvtier node's budgets. Immutable; validated.
 *
 * @param engine         one engine as modeled
 * @param servedName     the model name the engines serve and LMCache writes into keys (the Hugging Face id)
 * @param engines        engines in the fleet
 * @param loadMode       how the engines wait for KV loaded from kvtier (sync, async, layerwise)
 * @param offloads       {@code none}, {@code dram}, {@code dram+ssd}, {@code dram-shm} (dram with the engines moving chunk
 *                       bytes through the node's shared memory, as engines on its host would; one node),
 *                       {@code vllm-cpu} and {@code lmcache-cpu} (the baselines: each engine's own CPU memory, a
 *                       share of {@code memoryBytes}, loaded at the GPU's host link rate; vLLM's native CPU offloading
 *                       loads asynchronously, LMCache's local CPU tier in {@code loadMode})
 * @param routings       {@code direct} (the client spreads requests at random) or a router policy
 * @param rates          the sweep: requests/s for multi-round chats, a speed-up for a trace
 * @param trace          a Mooncake trace to replay, or null for multi-round chats
 * @param qa             the multi-round chat shape (its qps is replaced by each rate)
 * @param kvtierNodes    kvtier nodes: 1 is one node (LMCache's redis://), more a cluster with one backup per slot
 *                       (its redis-cluster://)
 * @param failureTimeout a cluster's {@code --failure-timeout}: how soon a killed node's backups take over
 * @param memoryBytes    each kvtier node's memory tier, in real KV bytes (divided by bytesScale for the node)
 * @param diskBytes      each kvtier node's disk tier for {@code dram+ssd}, in real KV bytes
 * @param keepPageCache  leave kvtier's disk files in the OS page cache (by default they are dropped every 0.5 s, so
 *                       that disk hits are disk reads; see PageCacheEvictor)
 * @param routerPrefetch a router sends KVC.PREFETCH for the disk chunks it routes to (the router's default)
 * @param bytesScale     share of each chunk's bytes moved (1: all), see EngineSimOptions.Offload
 * @param chunkTokens    LMCache's chunk size
 * @param killAfter      kill a kvtier node (SIGKILL; the last of a cluster) this long into every point, or null
 */
public record FleetOptions(ModeledEngine engine, String servedName, int engines, List<String> offloads,
                           List<String> routings, List<Double> rates, Path trace, MultiRoundQa.Options qa,
                           Duration warmUp, Duration duration, Duration drain, int kvtierNodes,
                           Duration failureTimeout, long memoryBytes, long diskBytes, boolean keepPageCache,
                           boolean routerPrefetch, double bytesScale, int chunkTokens, Duration requestTimeout, Duration killAfter,
                           Path launcher, Path out, io.kvtier.router.sim.LoadMode loadMode) {
    public static final List<String> OFFLOADS = List.of("none", "dram", "dram+ssd", "dram-shm", "vllm-cpu",
            "lmcache-cpu");
    /** The baselines: each engine's own CPU memory (--kvtier-memory split between the engines), no kvtier. */
    public static final List<String> LOCAL_OFFLOADS = List.of("vllm-cpu", "lmcache-cpu");
    public static final List<String> ROUTINGS = List.of("direct", "round-robin", "least-load", "prefix", "llmd",
            "dynamo", "approx-prefix", "kvtier");

    public FleetOptions {
        Objects.requireNonNull(engine, "engine");
        offloads = List.copyOf(offloads);
        routings = List.copyOf(routings);
        rates = List.copyOf(rates);
        check(engines >= 1 && engines <= 64, "--engines " + engines + " is not within 1..64");
        check(!offloads.isEmpty() && OFFLOADS.containsAll(offloads), "--offload " + offloads + ": choose from "
                + OFFLOADS);
        check(!routings.isEmpty() && ROUTINGS.containsAll(routings), "--routing " + routings + ": choose from "
                + ROUTINGS);
        check(!rates.isEmpty() && rates.stream().allMatch(r -> r > 0), "--rates must be positive numbers");
        check(!(routings.equals(List.of("kvtier")) && offloads.equals(List.of("none"))),
                "--routing kvtier prices kvtier's chunks: it needs an --offload other than none");
        check(duration.toMillis() >= 1000, "--duration must be at least 1s");
        check(!warmUp.isNegative() && warmUp.compareTo(duration) < 0, "--warm-up must be shorter than --duration");
        check(kvtierNodes >= 1 && kvtierNodes <= 16, "--kvtier-nodes " + kvtierNodes + " is not within 1..16");
        check(kvtierNodes == 1 || !failureTimeout.isNegative() && !failureTimeout.isZero(),
                "--kvtier-failure-timeout must be positive");
        check(memoryBytes >= 1 << 20 && diskBytes >= 16 << 20, "kvtier budgets are too small");
        check(bytesScale > 0 && bytesScale <= 1, "--kv-bytes-scale " + bytesScale + " is not within (0, 1]");
        check(killAfter == null || killAfter.compareTo(duration) < 0, "--kill-kvtier-after must fall within --duration");
        check(killAfter == null || kvtierNodes != 2, "--kill-kvtier-after with --kvtier-nodes 2 leaves one of two "
                + "voters, no majority: the cluster would stop; use 1 node (no failover) or 3 or more");
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    public Gpu gpu() {
        return engine.gpu();
    }

    /** GPUs in the fleet. */
    public int gpus() {
        return engines * engine.tp();
    }
}
