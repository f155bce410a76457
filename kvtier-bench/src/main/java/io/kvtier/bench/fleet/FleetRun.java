package io.kvtier.bench.fleet;

import io.kvtier.bench.compare.ServerProcess;
import io.kvtier.router.events.Layout;
import io.kvtier.router.sim.EngineSim;
import io.kvtier.router.sim.EngineSimOptions;
import io.kvtier.router.sim.EngineStats;
import io.kvtier.router.sim.StepBatch;
import io.kvtier.router.tokens.ChatTemplate;
import io.kvtier.router.tokens.Tokenizer;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/*
 * How a fleet run goes: for every offload configuration, routing and rate, one point:
 *   1. a fresh kvtier is started (none for "none"): one node, or a cluster of --kvtier-nodes with one backup per slot,
 *      each node with the run's budgets divided by --kv-bytes-scale: "dram" gets the memory budget and the least disk
 *      a node takes (16 MiB: no chunk fits, so what leaves memory is gone), "dram+ssd" the memory and the disk budget;
 *      "dram-shm" as "dram", the node with --shm yes and the engines' chunk bytes through its shared memory;
 *      the engines start fresh (empty GPU caches), offloading to it;
 *   2. the router is started in front of them with the routing's policy, following every node's store events, or,
 *      for "direct", the client spreads requests over the engines at random (as a Kubernetes Service would);
 *   3. the workload runs for --duration at the rate; requests sent during the warm-up are not counted in latencies;
 *      with --kill-kvtier-after, a node is killed (SIGKILL) that far into the point;
 *   4. requests still running get --drain to finish; then the engines' and the nodes' counters are read;
 *   5. router, engines and kvtier stop; kvtier's data is deleted (its logs are kept under scratch/).
 * The engines run in this process (each with its own step thread), the nodes and the router are processes of their
 * own: everything between them is real HTTP, ZMQ and RESP.
 */

/** Runs a fleet benchmark: configurations x rates, one {@link FleetPoint} each. */
public final class FleetRun {
    private final FleetOptions options;
    private final PrintStream log;
    private int pointNumber;

    public FleetRun(FleetOptions options, PrintStream log) {
        this.options = options;
        this.log = log;
    }

    public List<FleetPoint> run() throws IOException, InterruptedException {
        List<FleetPoint> points = new ArrayList<>();
        MooncakeTrace trace = options.trace() == null ? null : MooncakeTrace.load(options.trace());
        for (String offload : options.offloads()) {
            for (String routing : options.routings()) {
                if (routing.equals("kvtier") && (offload.equals("none") || FleetOptions.LOCAL_OFFLOADS.contains(offload))) {
                    continue; // no kvtier chunks for it to price
                }
                for (double rate : options.rates()) {
                    FleetWorkload workload = trace == null ? new MultiRoundQa(options.qa().withQps(rate))
                            : trace.replay(rate, true);
                    log.printf("-- %s, %s routing, %s%n", offload.equals("none") ? "no offload" : "kvtier " + offload,
                            routing, workload.rateLabel());
                    points.add(point(offload, routing, workload));
                }
            }
        }
        return points;
    }

    private FleetPoint point(String offload, String routing, FleetWorkload workload)
            throws IOException, InterruptedException {
        Path scratch = Files.createDirectories(options.out().resolve("scratch"));
        Path data = scratch.resolve("kvtier-" + offload.replace('+', '-') + "-" + routing + "-" + (++pointNumber));
        KvtierStore store = null;
        List<EngineSim> engines = new ArrayList<>();
        RouterProcess router = null;
        try {
            if (!offload.equals("none") && !FleetOptions.LOCAL_OFFLOADS.contains(offload)) {
                store = KvtierStore.start(options.launcher(), data, options.kvtierNodes(),
                        Math.max(1 << 20, Math.round(options.memoryBytes() * options.bytesScale())),
                        offload.equals("dram+ssd")
                                ? Math.max(16L << 20, Math.round(options.diskBytes() * options.bytesScale()))
                                : 16L << 20,
                        options.failureTimeout(), offload.equals("dram-shm"));
            }
            List<URI> urls = new ArrayList<>();
            List<String> endpoints = new ArrayList<>();
            for (int i = 0; i < options.engines(); i++) {
                EngineSim e = startEngine(store, i, offload);
                engines.add(e);
                urls.add(URI.create("http://127.0.0.1:" + e.port()));
                endpoints.add("http://127.0.0.1:" + e.port() + ",events=tcp://127.0.0.1:" + e.eventsPort());
            }
            if (!routing.equals("direct")) {
                Path routerLog = scratch.resolve("router-" + routing + "-" + pointNumber + ".log");
                router = RouterProcess.start(options.launcher(), routerLog, routing, endpoints,
                        store == null ? List.of() : store.routerAddresses(), options.servedName(),
                        options.engine().tp(), options.chunkTokens(), prefillRate(), options.routerPrefetch(),
                        options.bytesScale());
                urls = List.of(router.url());
            }
            try (PageCacheEvictor evictor = offload.equals("dram+ssd") && !options.keepPageCache()
                    ? PageCacheEvictor.start(data, Duration.ofMillis(500)) : null) {
                return measure(offload, routing, workload, urls, engines, store);
            }
        } finally {
            if (router != null) {
                router.close();
            }
            for (EngineSim e : engines) {
                e.close();
            }
            if (store != null) {
                store.close();
            }
            if (Files.exists(data)) { // also after a start that failed
                deleteData(data);
            }
        }
    }

    /** Deletes a point's kvtier data (GiBs of chunks), keeping the nodes' logs (the .log files directly in it). */
    private void deleteData(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                boolean nodeLog = p.getParent().equals(dir) && p.getFileName().toString().endsWith(".log");
                if (!nodeLog && !p.equals(dir)) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException | UncheckedIOException e) {
            log.printf("   (kvtier's data under %s could not be deleted: %s)%n", dir, e.getMessage());
        }
    }

    private EngineSim startEngine(KvtierStore store, int index, String kind) throws IOException {
        boolean sharedMemory = kind.equals("dram-shm");
        if (FleetOptions.LOCAL_OFFLOADS.contains(kind)) { // the baselines: each engine's own CPU memory
            EngineSimOptions.Offload local = options.engine().localCpu(options.servedName(), options.chunkTokens(),
                    options.memoryBytes() / options.engines(), options.bytesScale(),
                    kind.equals("vllm-cpu") ? io.kvtier.router.sim.LoadMode.ASYNC : options.loadMode());
            return new EngineSim(options.engine().options("127.0.0.1", ServerProcess.freePort(), options.servedName(),
                    ServerProcess.freePort(), -1,
                    "kv@engine-" + index + "@" + options.servedName(), Layout.MAP_V0_26, local), Tokenizer.bytes(),
                    ChatTemplate.builtin());
        }
        EngineSimOptions.Offload offload = store == null ? null : options.engine().offload(store.seed(),
                store.isCluster(), options.servedName(), options.chunkTokens(), 5_000_000_000L,
                Duration.ofSeconds(5), options.bytesScale()).withSharedMemory(sharedMemory)
                .withLoadMode(options.loadMode(), options.engine().model().attention().layers());
        EngineSimOptions o = options.engine().options("127.0.0.1", ServerProcess.freePort(), options.servedName(),
                ServerProcess.freePort(), -1,
                "kv@engine-" + index + "@" + options.servedName(), Layout.MAP_V0_26, offload);
        return new EngineSim(o, Tokenizer.bytes(), ChatTemplate.builtin());
    }

    /** The modeled prefill rate of one engine for a 2,048-token prompt chunk, tokens/s (the kvtier policy's price). */
    private double prefillRate() {
        return 2048 / options.engine().roofline().seconds(StepBatch.EMPTY.plusPrefill(0, 2048));
    }

    private FleetPoint measure(String offload, String routing, FleetWorkload workload, List<URI> urls,
            List<EngineSim> engines, KvtierStore store) throws IOException, InterruptedException {
        List<EngineStats> before = engines.stream().map(EngineSim::stats).toList();
        KvtierStore.HitsByNode hitsBefore = store == null ? null : store.hits();
        List<RequestResult> results = Collections.synchronizedList(new ArrayList<>());
        List<RequestResult> all = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<String> killed = new AtomicReference<>();
        AtomicLong killedAt = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        AtomicLong done = new AtomicLong();
        long start = System.nanoTime();
        long counted = start + options.warmUp().toNanos();
        long end = start + options.duration().toNanos();
        try (FleetClient client = new FleetClient(urls, options.servedName(), options.requestTimeout(), 4096,
                new java.util.Random(options.qa().seed()))) {
            RequestSender sender = r -> {
                sent.incrementAndGet();
                return client.send(r);
            };
            Thread killer = null;
            if (store != null && options.killAfter() != null) {
                KvtierStore s = store;
                killer = Thread.ofVirtual().start(() -> {
                    try {
                        Thread.sleep(options.killAfter());
                        killedAt.set(System.nanoTime());
                        String name = s.killOne();
                        killed.set(name);
                        log.printf("%n   kvtier node %s killed (SIGKILL) %.1f s into the point%n", name,
                                (killedAt.get() - start) / 1e9);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            FleetProgress progress = new FleetProgress(log, workload.rateLabel(), start, end,
                    FleetProgress.terminal());
            CompletableFuture<Void> ticking = CompletableFuture.runAsync(() -> progress.tickUntil(done, results));
            workload.run(sender, end, r -> {
                all.add(r);
                if (r.sentNanos() >= counted) {
                    results.add(r);
                }
                done.incrementAndGet();
            });
            long drainEnd = System.nanoTime() + options.drain().toNanos();
            while (done.get() < sent.get() && System.nanoTime() < drainEnd) {
                Thread.sleep(50);
            }
            progress.stop();
            ticking.join();
            if (killer != null) {
                killer.interrupt();
            }
        }
        double seconds = (Math.min(System.nanoTime(), end) - counted) / 1e9;
        List<RequestResult> measured;
        List<RequestResult> everything;
        synchronized (results) {
            measured = List.copyOf(results);
        }
        synchronized (all) {
            everything = List.copyOf(all);
        }
        EngineCounters counters = counters(before, engines.stream().map(EngineSim::stats).toList(),
                store == null ? null : store.hits().since(hitsBefore), options.bytesScale());
        double length = options.duration().toNanos() / 1e9;
        FleetTimeline timeline = FleetTimeline.of(everything, start, length, Math.max(1, Math.round(length / 60)),
                killed.get() == null ? Double.NaN : (killedAt.get() - start) / 1e9, killed.get());
        // A point says how its engines loaded: "dram async", "dram+ssd layerwise"; plain "dram" is synchronous.
        io.kvtier.router.sim.LoadMode mode = offload.equals("vllm-cpu") ? io.kvtier.router.sim.LoadMode.ASYNC
                : options.loadMode();
        String shown = offload.equals("none") || mode == io.kvtier.router.sim.LoadMode.SYNC ? offload
                : offload + " " + mode.label();
        return new FleetPoint(shown, routing, workload.rateLabel(), workload.requestsPerSecond(), options.gpus(),
                LatencyStats.of(measured, seconds), counters, timeline,
                ReuseCeiling.of(everything, counted, options.engine().blockSize()));
    }

    /**
     * The fleet's counters over the point. Tokens loaded from kvtier are split between its tiers as its nodes counted
     * their chunk reads (a killed node's reads are lost with it: the split is then the survivors'); with no counts at
     * all (the only node was killed) they are all put under memory. Bytes are those moved on this machine (a
     * --kv-bytes-scale share of the real KV bytes); the fetch rate is in real KV bytes (bytes read / scale over the
     * time the engines' steps waited for loads, which is already scaled).
     */
    static EngineCounters counters(List<EngineStats> before, List<EngineStats> after, KvtierStore.Hits hits,
            double bytesScale) {
        long prompt = 0;
        long gpu = 0;
        long external = 0;
        long prefill = 0;
        long read = 0;
        long written = 0;
        long dropped = 0;
        long failures = 0;
        long preemptions = 0;
        double busy = 0;
        double loading = 0;
        double lag = 0;
        for (int i = 0; i < after.size(); i++) {
            EngineStats a = after.get(i);
            EngineStats b = before.get(i);
            prompt += a.promptTokens() - b.promptTokens();
            gpu += a.gpuHitTokens() - b.gpuHitTokens();
            external += a.externalHitTokens() - b.externalHitTokens();
            prefill += a.prefillTokens() - b.prefillTokens();
            read += a.bytesRead() - b.bytesRead();
            written += a.bytesWritten() - b.bytesWritten();
            dropped += a.storesDropped() - b.storesDropped();
            failures += a.loadFailures() - b.loadFailures();
            preemptions += a.preemptions() - b.preemptions();
            busy += a.busySeconds() - b.busySeconds();
            loading += a.loadSeconds() - b.loadSeconds();
            lag += a.lagSeconds() - b.lagSeconds();
        }
        long memory = external;
        long disk = 0;
        if (hits != null && hits.memory() + hits.disk() > 0) {
            disk = Math.round((double) external * hits.disk() / (hits.memory() + hits.disk()));
            memory = external - disk;
        }
        return new EngineCounters(prompt, gpu, memory, disk, prefill, read, written, dropped, failures, preemptions,
                busy, loading, loading > 0 ? read / bytesScale / loading : Double.NaN, lag);
    }
}
