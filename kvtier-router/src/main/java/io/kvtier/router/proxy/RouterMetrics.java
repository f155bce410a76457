package io.kvtier.router.proxy;

import io.kvtier.events.EventSubscriber;
import io.kvtier.router.map.KvCacheMap;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** The router's Prometheus metrics: decisions by reason, outcomes per engine, prefix hits predicted and seen. */
final class RouterMetrics {
    private static final ExpositionFormats FORMATS = ExpositionFormats.init();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final String policy;
    private final Counter decisions;
    private final Counter outcomes;
    private final Counter predicted;
    private final Counter cached;

    RouterMetrics(String policy, Fleet fleet) {
        this.policy = policy;
        decisions = Counter.builder().name("kvtier_router_decisions_total")
                .help("Routing decisions, by policy and the reason the engine was chosen")
                .labelNames("policy", "reason").register(registry);
        outcomes = Counter.builder().name("kvtier_router_requests_total")
                .help("Requests sent to each engine, by outcome (ok, error: a 4xx passed on, retried: failed over)")
                .labelNames("engine", "outcome").register(registry);
        predicted = Counter.builder().name("kvtier_router_predicted_cached_tokens_total")
                .help("Prompt tokens the policy credited the chosen engine with holding (non-streamed answers)")
                .register(registry);
        cached = Counter.builder().name("kvtier_router_cached_tokens_total")
                .help("Prompt tokens the engines said they served from cache (usage.prompt_tokens_details)")
                .register(registry);
        GaugeWithCallback.builder().name("kvtier_router_engine_up").help("1 while the engine is healthy")
                .labelNames("engine").callback(cb -> fleet.engines().forEach(e -> cb.call(e.healthy() ? 1 : 0,
                        e.id()))).register(registry);
        GaugeWithCallback.builder().name("kvtier_router_engine_load")
                .help("Requests queued or running at the engine (its metrics, or the router's in-flight count)")
                .labelNames("engine").callback(cb -> fleet.engines().forEach(e -> cb.call(e.load(), e.id())))
                .register(registry);
        GaugeWithCallback.builder().name("kvtier_router_pending_prefill_tokens")
                .help("Prompt tokens the router expects the engine still to compute for the requests it sent there "
                        + "that have not answered yet (the kvtier policy's queue)")
                .labelNames("engine").callback(cb -> fleet.engines().forEach(e -> cb.call(e.pendingPrefillTokens(),
                        e.id()))).register(registry);
        GaugeWithCallback.builder().name("kvtier_router_pending_load_seconds")
                .help("Seconds of loads (CPU-tier reloads, kvtier fetches) the kvtier policy expects the engine still "
                        + "to do for the requests the router sent there that have not answered yet")
                .labelNames("engine").callback(cb -> fleet.engines().forEach(e -> cb.call(e.pendingLoadSeconds(),
                        e.id()))).register(registry);
        GaugeWithCallback.builder().name("kvtier_map_blocks").help("Blocks the KV-cache map holds, by engine and medium")
                .labelNames("engine", "medium").callback(cb -> {
                    for (KvCacheMap.EngineStats s : fleet.map().stats()) {
                        s.blocksByMedium().forEach((m, n) -> cb.call(n, s.engine(), m));
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("kvtier_map_orphan_blocks")
                .help("Blocks an engine stored that the map could not place in a prompt (their parent, or for a CPU "
                        + "block stored by hash its GPU block, was never seen), since the engine was added")
                .labelNames("engine").callback(cb -> {
                    for (KvCacheMap.EngineStats s : fleet.map().stats()) {
                        cb.call(s.orphans(), s.engine());
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("kvtier_map_event_gaps")
                .help("Sequence gaps seen in each engine's KV event stream (since its subscriber started)")
                .labelNames("engine").callback(cb -> {
                    for (Map.Entry<String, EventSubscriber.Stats> s : fleet.eventStats().entrySet()) {
                        cb.call(s.getValue().gaps(), s.getKey());
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("kvtier_map_event_resyncs")
                .help("Times an engine's map entries were dropped for a loss no replay repaired, or a restart")
                .labelNames("engine").callback(cb -> {
                    for (Map.Entry<String, EventSubscriber.Stats> s : fleet.eventStats().entrySet()) {
                        cb.call(s.getValue().resyncs(), s.getKey());
                    }
                }).register(registry);
        storeGauges(fleet);
    }

    /** The store side of the map: chunks per node and tier, event lag, resyncs and snapshots per node. */
    private void storeGauges(Fleet fleet) {
        GaugeWithCallback.builder().name("kvtier_map_store_chunks")
                .help("LMCache chunks the map knows on each kvtier node, by tier (memory, disk)")
                .labelNames("node", "tier").callback(cb -> {
                    StoreFeeds s = fleet.store();
                    if (s != null) {
                        for (io.kvtier.router.map.StoreMap.NodeStats n : s.map().stats()) {
                            cb.call(n.memoryChunks(), n.node(), "memory");
                            cb.call(n.diskChunks(), n.node(), "disk");
                        }
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("kvtier_map_store_fetch_bandwidth_bytes_per_second")
                .help("Fetch bandwidth measured from each kvtier node and tier (a chunk GET timed, averaged)")
                .labelNames("node", "tier").callback(cb -> {
                    FetchProbes p = fleet.fetchProbes();
                    if (p != null) {
                        p.all().forEach((k, m) -> cb.call(m.bytesPerSecond(), k.substring(0, k.indexOf(' ')),
                                k.substring(k.indexOf(' ') + 1)));
                    }
                }).register(registry);
        io.prometheus.metrics.core.metrics.CounterWithCallback.builder().name("kvtier_router_prefetch_keys")
                .help("Chunk keys named to kvtier nodes with KVC.PREFETCH after routing (sent, dropped: queue full, "
                        + "failed: sends that failed)")
                .labelNames("outcome").callback(cb -> {
                    StorePrefetch p = fleet.storePrefetch();
                    if (p != null) {
                        cb.call(p.keys(), "sent");
                        cb.call(p.dropped(), "dropped");
                        cb.call(p.failed(), "failed");
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("kvtier_map_store_event_lag_seconds")
                .help("Age of the last store-event batch applied from each kvtier node, when it was applied")
                .labelNames("node").callback(cb -> {
                    StoreFeeds s = fleet.store();
                    if (s != null) {
                        s.map().stats().forEach(n -> cb.call(n.lagSeconds(), n.node()));
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("kvtier_map_store_event_resyncs")
                .help("Times a kvtier node's entries were dropped (a loss, a restart, a dropped connection)")
                .labelNames("node").callback(cb -> {
                    StoreFeeds s = fleet.store();
                    if (s != null) {
                        s.eventStats().forEach((node, st) -> cb.call(st.resyncs(), node));
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("kvtier_map_store_snapshots")
                .help("Snapshots taken of each kvtier node's keys (on start, and after each resync)")
                .labelNames("node").callback(cb -> {
                    StoreFeeds s = fleet.store();
                    if (s != null) {
                        s.eventStats().forEach((node, st) -> cb.call(st.snapshots(), node));
                    }
                }).register(registry);
    }

    void decided(String reason) {
        decisions.labelValues(policy, reason).inc();
    }

    void outcome(String engine, String outcome) {
        outcomes.labelValues(engine, outcome).inc();
    }

    /** One answer's cached tokens ({@code seen} -1: the answer did not say) against what the policy predicted. */
    void cached(int predictedTokens, int seen) {
        if (seen >= 0) {
            predicted.inc(predictedTokens);
            cached.inc(seen);
        }
    }

    String scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            FORMATS.getPrometheusTextFormatWriter().write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
