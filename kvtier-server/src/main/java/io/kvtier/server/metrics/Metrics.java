package io.kvtier.server.metrics;

import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.server.reply.ErrorStats;
import io.kvtier.store.StoreStats;
import io.kvtier.store.TieredStore;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;

/**
 * The node's Prometheus registry and, when a port is given, its {@code /metrics} HTTP endpoint
 * ({@link MetricsEndpoint}). Command metrics are
 * recorded on event loops (lock-free); tier and cluster metrics are read from {@link StoreStats} and
 * {@link ClusterNode} at scrape time.
 */
public final class Metrics implements AutoCloseable {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private MetricsEndpoint http;

    public Metrics() {
        // Counted per event loop (CommandCounts) and summed at scrape time, in the shapes a Prometheus Counter and a
        // classic-only Histogram would expose (MetricsTest compares them).
        registry.register(() -> counter("kvtier_commands", "Commands processed, by command", CommandCounts.CALLS));
        registry.register(() -> counter("kvtier_command_errors", "Commands answered with an error, by command",
                CommandCounts.FAILED));
        registry.register(this::latency);
    }

    /** Registers per-model KV-cache gauges and counters (label {@code model}), read at scrape time. */
    public void bind(io.kvtier.kvcache.KvCache kv) {
        modelGauge("kvtier_kvcache_chunks", "LMCache chunks held (kv_bytes or whole-chunk keys), by model", kv,
                io.kvtier.kvcache.ModelSnapshot::chunks);
        modelGauge("kvtier_kvcache_bytes", "Bytes of LMCache keys held, by model", kv,
                io.kvtier.kvcache.ModelSnapshot::bytes);
        CounterWithCallback.builder().name("kvtier_kvcache_lookups")
                .help("Reads of LMCache chunk data and probes of LMCache keys, by model and outcome")
                .labelNames("model", "outcome")
                .callback(cb -> kv.models().forEach(m -> {
                    cb.call(m.memoryHits(), m.model(), "memory");
                    cb.call(m.diskHits(), m.model(), "disk");
                    cb.call(m.misses(), m.model(), "miss");
                })).register(registry);
        CounterWithCallback.builder().name("kvtier_kvcache_lost_chunks")
                .help("LMCache chunks the disk tier evicted for room, by model").labelNames("model")
                .callback(cb -> kv.models().forEach(m -> cb.call(m.lostChunks(), m.model()))).register(registry);
        CounterWithCallback.builder().name("kvtier_kvcache_companion_deletes")
                .help("LMCache metadata or kv_bytes keys deleted because their other half left")
                .callback(cb -> cb.call(kv.companionDeletes())).register(registry);
    }

    private void modelGauge(String name, String help, io.kvtier.kvcache.KvCache kv,
                            ToLongFunction<io.kvtier.kvcache.ModelSnapshot> value) {
        GaugeWithCallback.builder().name(name).help(help).labelNames("model")
                .callback(cb -> kv.models().forEach(m -> cb.call(value.applyAsLong(m), m.model()))).register(registry);
    }

    /** Registers the store's per-tier gauges and counters. */
    public void bind(TieredStore store) {
        gauge("kvtier_tier_bytes_used", "Bytes in use per tier (memory: whole pages; disk: region files)", store,
                s -> s.memoryUsedBytes(), s -> s.diskUsedBytes());
        gauge("kvtier_tier_budget_bytes", "Configured budget per tier", store, StoreStats::memoryBudget,
                StoreStats::diskBudget);
        gauge("kvtier_tier_entries", "Values held per tier (memory: includes values being demoted)", store,
                StoreStats::memoryEntries, StoreStats::diskEntries);
        counter("kvtier_tier_hits", "Reads served per tier", store, StoreStats::memoryHits, StoreStats::diskHits);
        CounterWithCallback.builder().name("kvtier_misses").help("Reads of absent keys")
                .callback(cb -> cb.call(store.stats().misses())).register(registry);
        single("kvtier_demotions", "Values moved from memory to disk", store, StoreStats::demotions);
        single("kvtier_promotions", "Values copied from disk back to memory", store, StoreStats::promotions);
        single("kvtier_prefetched", "Values copied from disk to memory ahead of their reads (KVC.PREFETCH)", store,
                StoreStats::prefetched);
        single("kvtier_prefetch_used", "Prefetched values read from memory", store, StoreStats::prefetchUsed);
        single("kvtier_prefetch_wasted", "Prefetched values that left memory unread", store,
                StoreStats::prefetchWasted);
        single("kvtier_evictions", "Values lost: the disk tier evicted their region, or the disk write limit refused "
                + "them", store, StoreStats::evictions);
        single("kvtier_disk_admission_dropped", "Values that left memory unread and were not written, under "
                + "--disk-write-limit", store, StoreStats::admissionDropped);
        single("kvtier_corrupt_reads", "Disk records that failed their checksum (served as misses)", store,
                StoreStats::corruptReads);
        GaugeWithCallback.builder().name("kvtier_keys").help("Keys in the store")
                .callback(cb -> cb.call(store.stats().keys())).register(registry);
        GaugeWithCallback.builder().name("kvtier_pinned_bytes").help("Bytes of keys pinned in memory (KVC.PIN)")
                .callback(cb -> cb.call(store.stats().pinnedBytes())).register(registry);
    }

    /** Registers the cluster's gauges and counters (see {@link ClusterMetrics}); only a cluster node calls this. */
    public void bind(ClusterNode node) {
        ClusterMetrics.register(registry, node);
    }

    private void gauge(String name, String help, TieredStore store, ToLongFunction<StoreStats> memory,
                       ToLongFunction<StoreStats> disk) {
        GaugeWithCallback.builder().name(name).help(help).labelNames("tier").callback(cb -> {
            StoreStats s = store.stats();
            cb.call(memory.applyAsLong(s), "memory");
            cb.call(disk.applyAsLong(s), "disk");
        }).register(registry);
    }

    private void counter(String name, String help, TieredStore store, ToLongFunction<StoreStats> memory,
                         ToLongFunction<StoreStats> disk) {
        CounterWithCallback.builder().name(name).help(help).labelNames("tier").callback(cb -> {
            StoreStats s = store.stats();
            cb.call(memory.applyAsLong(s), "memory");
            cb.call(disk.applyAsLong(s), "disk");
        }).register(registry);
    }

    private void single(String name, String help, TieredStore store, ToLongFunction<StoreStats> value) {
        CounterWithCallback.builder().name(name).help(help)
                .callback(cb -> cb.call(value.applyAsLong(store.stats()))).register(registry);
    }

    /** A command name seen, its number in {@link CommandCounts}, and when it was first seen (Prometheus's created). */
    private record Command(String name, int id, long createdMillis) {
    }

    private final ConcurrentHashMap<String, Command> commandIds = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicInteger nextId = new java.util.concurrent.atomic.AtomicInteger();
    private final CommandCounts counts = new CommandCounts();
    /** What INFO commandstats subtracts since CONFIG RESETSTAT, by command id (Prometheus's counters keep counting). */
    private final ConcurrentHashMap<Integer, long[]> statsBaseline = new ConcurrentHashMap<>();
    private final ErrorStats errorStats = new ErrorStats();

    /**
     * Records one command that ran: its name (lower case, {@code container|sub} for a subcommand), whether it
     * answered an error, and its duration. No atomic instruction on an event loop.
     */
    public void command(String name, boolean failed, long nanos) {
        counts.ran(command(name).id(), failed, nanos);
    }

    /** Records a command refused before it ran (wrong arity, not authenticated): Redis's rejected_calls. */
    public void rejected(String name) {
        counts.rejected(command(name).id());
    }

    private Command command(String name) {
        Command c = commandIds.get(name); // the common case, without the capturing lambda below
        return c != null ? c : commandIds.computeIfAbsent(name, n -> new Command(n, nextId.getAndIncrement(),
                System.currentTimeMillis()));
    }

    /** The commands seen, by name. */
    private List<Command> commandsByName() {
        List<Command> all = new ArrayList<>(commandIds.values());
        all.sort(Comparator.comparing(Command::name));
        return all;
    }

    private CounterSnapshot counter(String name, String help, int field) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
        for (Command c : commandsByName()) {
            b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(counts.sum(c.id())[field])
                    .labels(Labels.of("command", c.name())).createdTimestampMillis(c.createdMillis()).build());
        }
        return b.build();
    }

    private HistogramSnapshot latency() {
        double[] bounds = java.util.Arrays.copyOf(CommandCounts.UPPER_BOUNDS, CommandCounts.UPPER_BOUNDS.length + 1);
        bounds[bounds.length - 1] = Double.POSITIVE_INFINITY;
        HistogramSnapshot.Builder b = HistogramSnapshot.builder().name("kvtier_command_duration_seconds")
                .help("Time from decoding a command to writing its reply, by command");
        for (Command c : commandsByName()) {
            long[] sum = counts.sum(c.id());
            long[] buckets = java.util.Arrays.copyOfRange(sum, CommandCounts.BUCKETS, CommandCounts.STRIDE);
            b.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder()
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, buckets))
                    .sum(sum[CommandCounts.NANOS] / 1e9).labels(Labels.of("command", c.name()))
                    .createdTimestampMillis(c.createdMillis()).build());
        }
        return b.build();
    }

    /** The registry scraped (tests compare its exposition). */
    PrometheusRegistry registry() {
        return registry;
    }

    /** The error replies sent, by code (INFO errorstats, total_error_replies). */
    public ErrorStats errors() {
        return errorStats;
    }

    /** One line of INFO commandstats. */
    public record CommandStat(String name, long calls, long micros, long rejected, long failed) {
    }

    /** The commands called or refused since start or CONFIG RESETSTAT, by name. */
    public List<CommandStat> commandStats() {
        List<CommandStat> out = new ArrayList<>();
        for (Command c : commandsByName()) {
            long[] sum = counts.sum(c.id());
            long[] base = statsBaseline.get(c.id());
            long calls = sum[CommandCounts.CALLS] - (base == null ? 0 : base[CommandCounts.CALLS]);
            long rejected = sum[CommandCounts.REJECTED] - (base == null ? 0 : base[CommandCounts.REJECTED]);
            long nanos = sum[CommandCounts.NANOS] - (base == null ? 0 : base[CommandCounts.NANOS]);
            long failed = sum[CommandCounts.FAILED] - (base == null ? 0 : base[CommandCounts.FAILED]);
            if (calls > 0 || rejected > 0) {
                out.add(new CommandStat(c.name(), calls, nanos / 1000, rejected, failed));
            }
        }
        return out;
    }

    /** CONFIG RESETSTAT: zeroes what INFO commandstats and errorstats report (Prometheus counters keep counting). */
    public void resetStats() {
        commandIds.values().forEach(c -> statsBaseline.put(c.id(), counts.sum(c.id())));
        errorStats.reset();
    }

    /**
     * Starts the HTTP endpoint on {@code bind}:{@code port} (see {@link MetricsEndpoint}), asking for
     * {@code password} if it is not null; returns the bound port.
     */
    public int serve(String bind, int port, String password) throws IOException {
        http = MetricsEndpoint.start(bind, port, registry, password, MetricsEndpoint.REQUEST_TIMEOUT_MILLIS);
        return http.port();
    }

    @Override
    public void close() {
        if (http != null) {
            http.close();
        }
    }
}
