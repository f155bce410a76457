package io.kvtier.server.metrics;

import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.server.reply.ErrorStats;
import io.kvtier.store.StoreStats;
import io.kvtier.store.TieredStore;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;

/**
 * The node's Prometheus registry and, when a port is given, its {@code /metrics} HTTP endpoint
 * ({@link MetricsEndpoint}). Command metrics are
 * recorded on event loops (lock-free); tier and cluster metrics are read from {@link StoreStats} and
 * {@link ClusterNode} at scrape time.
 */
public final class Metrics implements AutoCloseable {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter commands;
    private final Counter commandErrors;
    private final Histogram latency;
    private MetricsEndpoint http;

    public Metrics() {
        commands = Counter.builder().name("kvtier_commands_total").help("Commands processed, by command")
                .labelNames("command").register(registry);
        commandErrors = Counter.builder().name("kvtier_command_errors_total")
                .help("Commands answered with an error, by command").labelNames("command").register(registry);
        latency = Histogram.builder().name("kvtier_command_duration_seconds")
                .help("Time from decoding a command to writing its reply, by command").labelNames("command")
                .classicUpperBounds(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                        0.25, 0.5, 1, 2.5, 5, 10)
                // Classic buckets only: a native histogram's observe took 4-7% of a small command's samples
                // (CommandPathBenchmark), and the text format scraped here shows classic buckets anyway.
                .classicOnly()
                .register(registry);
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

    /**
     * One command's counters: its Prometheus data points, resolved once (label lookups allocate, and this runs per
     * command), and the counts INFO commandstats reports, which CONFIG RESETSTAT zeroes.
     */
    private record PerCommand(CounterDataPoint count, CounterDataPoint errors, DistributionDataPoint latency,
                              LongAdder calls, LongAdder nanos, LongAdder rejected, LongAdder failed) {
    }

    private final ConcurrentHashMap<String, PerCommand> perCommand = new ConcurrentHashMap<>();
    private final ErrorStats errorStats = new ErrorStats();

    /**
     * Records one command that ran: its name (lower case, {@code container|sub} for a subcommand), whether it
     * answered an error, and its duration.
     */
    public void command(String name, boolean failed, long nanos) {
        PerCommand m = perCommand(name);
        m.count().inc();
        m.calls().increment();
        m.nanos().add(nanos);
        if (failed) {
            m.errors().inc();
            m.failed().increment();
        }
        m.latency().observe(nanos / 1e9);
    }

    /** Records a command refused before it ran (wrong arity, not authenticated): Redis's rejected_calls. */
    public void rejected(String name) {
        perCommand(name).rejected().increment();
    }

    private PerCommand perCommand(String name) {
        PerCommand m = perCommand.get(name); // the common case, without the capturing lambda below
        return m != null ? m : perCommand.computeIfAbsent(name, n -> new PerCommand(commands.labelValues(n),
                commandErrors.labelValues(n), latency.labelValues(n), new LongAdder(), new LongAdder(),
                new LongAdder(), new LongAdder()));
    }

    /** The error replies sent, by code (INFO errorstats, total_error_replies). */
    public ErrorStats errors() {
        return errorStats;
    }

    /** One line of INFO commandstats. */
    public record CommandStat(String name, long calls, long micros, long rejected, long failed) {
    }

    /** The commands called or refused since start or CONFIG RESETSTAT, by name. */
    public java.util.List<CommandStat> commandStats() {
        java.util.List<CommandStat> out = new java.util.ArrayList<>();
        perCommand.forEach((name, m) -> {
            long calls = m.calls().sum();
            long rejected = m.rejected().sum();
            if (calls > 0 || rejected > 0) {
                out.add(new CommandStat(name, calls, m.nanos().sum() / 1000, rejected, m.failed().sum()));
            }
        });
        out.sort(java.util.Comparator.comparing(CommandStat::name));
        return out;
    }

    /** CONFIG RESETSTAT: zeroes what INFO commandstats and errorstats report (Prometheus counters keep counting). */
    public void resetStats() {
        perCommand.values().forEach(m -> {
            m.calls().reset();
            m.nanos().reset();
            m.rejected().reset();
            m.failed().reset();
        });
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
