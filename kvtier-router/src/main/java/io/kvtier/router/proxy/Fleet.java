package io.kvtier.router.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.events.EventSubscriber;
import io.kvtier.router.events.KvEventBatch;
import io.kvtier.router.events.VllmEventCodec;
import io.kvtier.router.map.EngineFeed;
import io.kvtier.router.map.KvCacheMap;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.io.IOException;
import java.nio.file.Path;
import io.kvtier.router.map.MapSnapshot;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Health, load and KV events of the engines behind the router.
 *
 * Every probe interval each engine is asked for /v1/models (the model it serves) and /metrics (vLLM's running and
 * waiting requests, KV usage), each within the probe timeout. An engine is healthy from its first good probe; it is
 * unhealthy after a failed probe or a failed request the proxy reports, and then gets no requests until a probe
 * succeeds again. So a dead engine is skipped within one probe interval plus one timeout, and at once by the request
 * that found it dead.
 *
 * Its map entries live exactly while it is healthy: added fresh (empty) and its event subscriber started when it
 * becomes healthy, dropped with the subscriber when it becomes unhealthy (a restarted engine's cache is empty, and
 * its block hashes new). A dead or silent event stream degrades only that engine's prefix scores, never a request.
 *
 * With a state file the map outlives the router: every state interval, and on close, each engine's entries are saved
 * with the seq and digest of the last batch they reflect (MapSnapshot). A router started on that file puts an engine's
 * saved entries back when the engine first comes up, and its subscriber resumes after that batch if the engine's
 * replay buffer still holds it (the same process, nothing missed since it was saved); otherwise they are dropped and
 * the map is rebuilt from the buffer, as without a file. So a restarted router answers for blocks older than the
 * replay buffer, and never for blocks of an engine that restarted meanwhile.
 */

/** The engines behind the router: their health, load and map entries. Thread-safe. */
public final class Fleet implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Fleet.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<EngineState> engines = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final KvCacheMap map;
    private final Duration probeTimeout;
    private final Duration probeInterval;
    private final HttpClient http;
    private final ScheduledExecutorService probes;
    private volatile StoreFeeds store;
    private volatile DnsDiscovery discovery;
    private volatile FetchProbes fetchProbes;
    private volatile StorePrefetch storePrefetch;
    private final Map<String, EventSubscriber<?>> subscribers = new ConcurrentHashMap<>();
    /** The bound event endpoints, each read once for all the engines that publish to it; closed with the fleet. */
    private final Map<String, io.kvtier.events.SharedEventPort> eventPorts = new ConcurrentHashMap<>();
    private final Map<String, EngineFeed> feeds = new ConcurrentHashMap<>();
    /** Saved entries of engines not up since the router started, by id (each is used once). */
    private final Map<String, MapSnapshot> saved = new ConcurrentHashMap<>();
    private final Path stateFile;
    private boolean closed;

    public Fleet(List<EngineEndpoint> endpoints, KvCacheMap map, Duration probeInterval, Duration probeTimeout) {
        this(endpoints, map, probeInterval, probeTimeout, null, null);
    }

    /** As above, keeping the map in {@code stateFile} (null: nowhere), saved every {@code stateInterval}. */
    public Fleet(List<EngineEndpoint> endpoints, KvCacheMap map, Duration probeInterval, Duration probeTimeout,
            Path stateFile, Duration stateInterval) {
        this.map = map;
        this.stateFile = stateFile;
        this.probeTimeout = probeTimeout;
        this.probeInterval = probeInterval;
        this.http = HttpClient.newBuilder().connectTimeout(probeTimeout).build();
        probes = Executors.newScheduledThreadPool(1, Thread.ofPlatform().daemon().name("router-probes").factory());
        if (stateFile != null) {
            try {
                Map<String, MapSnapshot> found = MapSnapshot.read(stateFile);
                saved.putAll(found);
                log.info("map state {}: {} engines, {} blocks saved", stateFile, found.size(),
                        found.values().stream().mapToLong(MapSnapshot::blocks).sum());
            } catch (IOException e) {
                log.warn("map state {} not used, the map starts empty: {}", stateFile, e.getMessage());
            }
            long every = stateInterval.toMillis();
            probes.scheduleWithFixedDelay(this::saveQuietly, every, every, TimeUnit.MILLISECONDS);
        }
        for (EngineEndpoint e : endpoints) {
            add(e);
        }
    }

    /**
     * Adds an engine (DNS discovery found it), probed from now on; false if one of that id is there already or the
     * fleet is closed.
     */
    public synchronized boolean add(EngineEndpoint endpoint) {
        if (closed || engines.stream().anyMatch(x -> x.id().equals(endpoint.id()))) {
            return false;
        }
        EngineState e = new EngineState(endpoint);
        engines.add(e);
        e.probe = probes.scheduleWithFixedDelay(() -> {
            if (e.probing.compareAndSet(false, true)) { // one probe per engine at a time: a slow one is not piled on
                Thread.ofVirtual().start(() -> {
                    try {
                        probe(e);
                    } finally {
                        e.probing.set(false);
                    }
                });
            }
        }, 0, probeInterval.toMillis(), TimeUnit.MILLISECONDS);
        return true;
    }

    /**
     * Removes an engine (gone from DNS): no more probes or requests, its map entries and event subscriber dropped.
     * Requests running there finish. False if there was none of that id.
     */
    public synchronized boolean remove(String id) {
        EngineState e = engines.stream().filter(x -> x.id().equals(id)).findFirst().orElse(null);
        if (e == null) {
            return false;
        }
        engines.remove(e);
        e.probe.cancel(false);
        e.removed = true;
        down(e, "removed from the fleet");
        return true;
    }

    public List<EngineState> engines() {
        return List.copyOf(engines);
    }

    /** Healthy engines serving {@code model}. */
    public List<EngineState> serving(String model) {
        return engines.stream().filter(e -> e.healthy && model.equals(e.model)).toList();
    }

    public KvCacheMap map() {
        return map;
    }

    /** Follows kvtier nodes' store events too (the lookup API and the kvtier policy use them); closed with the fleet. */
    public void attach(StoreFeeds feeds) {
        this.store = feeds;
    }

    /** Finds engines by DNS; closed with the fleet (first: it adds and removes engines). */
    public void attach(DnsDiscovery discovery) {
        this.discovery = discovery;
    }

    /** Where the fetch bandwidths measured from the kvtier nodes are read (the caller closes it); null: none. */
    public void attach(FetchProbes probes) {
        this.fetchProbes = probes;
    }

    /** Where routed requests' disk chunks are prefetched (the caller closes it); null: none. */
    public void attach(StorePrefetch prefetch) {
        this.storePrefetch = prefetch;
    }

    /** Prefetch on route; null without {@code --kvtier} or with {@code --no-prefetch}. */
    public StorePrefetch storePrefetch() {
        return storePrefetch;
    }

    /** The fetch bandwidths measured; null without {@code --kvtier} or with probes off. */
    public FetchProbes fetchProbes() {
        return fetchProbes;
    }

    /** The kvtier nodes followed; null without {@code --kvtier}. */
    public StoreFeeds store() {
        return store;
    }

    public Map<String, EventSubscriber.Stats> eventStats() {
        Map<String, EventSubscriber.Stats> out = new java.util.TreeMap<>();
        subscribers.forEach((id, s) -> out.put(id, s.stats()));
        return out;
    }

    /** A request to {@code e} failed to connect or answer: no more requests there until a probe succeeds. */
    void failed(EngineState e, String why) {
        e.failures.incrementAndGet();
        e.lastError = why;
        down(e, why);
    }

    /**
     * Writes every engine's entries to the state file (with those saved before of engines not up since); false
     * without a state file.
     */
    public boolean saveState() throws IOException {
        if (stateFile == null) {
            return false;
        }
        Map<String, MapSnapshot> all = new java.util.TreeMap<>();
        saved.forEach((id, s) -> { // of engines still in the fleet only: one gone from DNS is not kept for ever
            if (engines.stream().anyMatch(e -> e.id().equals(id))) {
                all.put(id, s);
            }
        });
        for (EngineFeed f : feeds.values()) {
            MapSnapshot s = f.save();
            if (s != null) {
                all.put(s.engine(), s);
            }
        }
        synchronized (stateFile) { // the interval's save and the close's never interleave
            MapSnapshot.write(stateFile, List.copyOf(all.values()));
        }
        return true;
    }

    private void saveQuietly() {
        try {
            saveState();
        } catch (IOException | RuntimeException e) {
            log.warn("saving the map state to {} failed: {}", stateFile, e.toString());
        }
    }

    private void probe(EngineState e) {
        try {
            JsonNode models = JSON.readTree(get(e, "/v1/models"));
            String model = models.path("data").path(0).path("id").asText(null);
            if (model == null) {
                throw new IllegalStateException("/v1/models names no model");
            }
            readLoad(e, get(e, "/metrics"), e.endpoint.dpRank());
            e.lastOkNanos = System.nanoTime();
            if (!e.healthy || !model.equals(e.model)) {
                up(e, model);
            }
        } catch (Exception ex) {
            e.lastError = ex.toString();
            down(e, "probe failed: " + ex);
        }
    }

    /** GET within the probe timeout, body included (the client's own timeout stops at the headers). */
    private String get(EngineState e, String path) throws Exception {
        java.util.concurrent.CompletableFuture<HttpResponse<String>> f = http.sendAsync(
                HttpRequest.newBuilder(URI.create(e.endpoint.url() + path)).timeout(probeTimeout).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> r;
        try {
            r = f.get(probeTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException ex) {
            f.cancel(true);
            throw new java.io.IOException(path + " took over " + probeTimeout.toMillis() + " ms");
        }
        if (r.statusCode() != 200) {
            throw new IllegalStateException(path + " answered " + r.statusCode());
        }
        return r.body();
    }

    /**
     * vLLM's gauges, summed over their label sets; older vLLM names KV usage gpu_cache_usage_perc. For one
     * data-parallel rank ({@code rank} not null) only the series labelled {@code engine="RANK"}, where any series is
     * labelled by engine (a server whose metrics name no engine is taken whole).
     */
    static void readLoad(EngineState e, String metrics, Integer rank) {
        String label = rank == null ? null : "engine=\"" + rank + "\"";
        boolean labelled = label != null && metrics.contains("engine=\"");
        double running = 0;
        double waiting = 0;
        double usage = 0;
        for (String line : metrics.split("\n")) {
            if (line.startsWith("#") || line.isBlank()) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            if (labelled && !line.contains(label)) {
                continue;
            }
            String name = line.substring(0, Math.max(0, line.indexOf('{') >= 0 ? line.indexOf('{') : space));
            double v;
            try {
                v = Double.parseDouble(line.substring(space + 1));
            } catch (NumberFormatException ex) {
                continue;
            }
            switch (name) {
                case "vllm:num_requests_running" -> running += v;
                case "vllm:num_requests_waiting" -> waiting += v;
                case "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc" -> usage = Math.max(usage, v);
                default -> { }
            }
        }
        e.running = running;
        e.waiting = waiting;
        e.kvUsage = usage;
    }

    private synchronized void up(EngineState e, String model) {
        if (closed || e.removed) { // a probe that was running when the engine was removed
            return;
        }
        stopEvents(e);
        e.model = model;
        map.addEngine(e.id(), model);
        if (e.endpoint.events() != null) {
            EngineFeed feed = new EngineFeed(map, e.id());
            MapSnapshot before = saved.remove(e.id());
            boolean restored = before != null && feed.restore(before);
            EventSubscriber<KvEventBatch> sub = new EventSubscriber<>(e.id(), e.endpoint.events(),
                    e.endpoint.replay(), e.endpoint.topic(), probeTimeout, VllmEventCodec::decode, false,
                    new EventSubscriber.Listener<KvEventBatch>() {
                        @Override
                        public void batch(KvEventBatch batch) {
                            feed.apply(batch);
                        }

                        @Override
                        public void batch(KvEventBatch batch, long seq, long digest) {
                            feed.apply(batch, seq, digest);
                        }

                        @Override
                        public void heartbeat(long seq, long digest) {
                            feed.position(seq, digest);
                        }

                        @Override
                        public void resync(String why) {
                            feed.resync();
                        }
                    });
            if (e.endpoint.bindEvents()) { // the engine's publisher connects to the router's port
                sub.fedBy(eventPorts.computeIfAbsent(e.endpoint.events(), io.kvtier.events.SharedEventPort::bind));
            }
            if (restored) {
                sub.resume(before.seq(), before.digest());
                log.info("engine {}: {} saved blocks put back, to be confirmed by its replay of batch {}", e.id(),
                        before.blocks(), before.seq());
            }
            feeds.put(e.id(), feed);
            subscribers.put(e.id(), sub.start());
        }
        e.healthy = true;
        log.info("engine {} is up, serving {}{}", e.id(), model,
                e.endpoint.events() == null ? " (no KV events: scored by load)" : ", KV events " + e.endpoint.events());
    }

    private synchronized void down(EngineState e, String why) {
        if (e.healthy) {
            e.healthy = false;
            log.warn("engine {} is down: {}", e.id(), why);
        }
        stopEvents(e);
        feeds.remove(e.id());
        map.removeEngine(e.id());
    }

    /** Stops the engine's subscriber; its thread ends on its own (within a replay timeout), never waited on here. */
    private void stopEvents(EngineState e) {
        EventSubscriber<?> s = subscribers.remove(e.id());
        if (s != null) {
            s.stopSoon(); // no batch of it is applied after this one
            Thread.ofVirtual().start(s::close);
        }
    }

    @Override
    public void close() {
        DnsDiscovery d = discovery;
        if (d != null) {
            d.close();
        }
        closeEngines();
    }

    private synchronized void closeEngines() {
        closed = true;
        probes.shutdownNow();
        subscribers.values().forEach(EventSubscriber::stopSoon); // all told first: their ends are waited on together
        subscribers.values().forEach(EventSubscriber::close);
        subscribers.clear();
        eventPorts.values().forEach(io.kvtier.events.SharedEventPort::close);
        eventPorts.clear();
        saveQuietly(); // after the subscribers stopped: the last batches applied are in it
        if (store != null) {
            store.close();
        }
    }
}
