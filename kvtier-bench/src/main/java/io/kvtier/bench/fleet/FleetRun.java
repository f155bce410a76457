package io.kvtier.bench.fleet;

import io.kvtier.client.HostPort;
import io.kvtier.router.events.Layout;
import io.kvtier.router.sim.EngineSim;
import io.kvtier.router.sim.EngineSimOptions;
import io.kvtier.router.sim.EngineStats;
import io.kvtier.router.sim.StepBatch;
import io.kvtier.router.tokens.ChatTemplate;
import io.kvtier.router.tokens.Tokenizer;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/*
 * How a fleet run goes: for every offload configuration, routing and rate, one point:
 *   1. a fresh kvtier node is started (none for "none") with the run's budgets, divided by --kv-bytes-scale: "dram"
 *      gets the memory budget and the least disk a node takes (16 MiB: no chunk fits, so what leaves memory is gone),
 *      "dram+ssd" the memory and the disk budget; the engines start fresh (empty GPU caches), offloading to the node;
 *   2. the router is started in front of them with the routing's policy, or, for "direct", the client spreads
 *      requests over the engines round-robin;
 *   3. the workload runs for --duration at the rate; requests sent during the warm-up are not counted in latencies;
 *   4. requests still running get --drain to finish; then the engines' and the node's counters are read;
 *   5. router and engines stop.
 * The engines run in this process (each with its own step thread), the node and the router are processes of their
 * own: everything between them is real HTTP, ZMQ and RESP.
 */

/** Runs a fleet benchmark: configurations x rates, one {@link FleetPoint} each. */
public final class FleetRun {
    private final FleetOptions options;
    private final PrintStream log;

    public FleetRun(FleetOptions options, PrintStream log) {
        this.options = options;
        this.log = log;
    }

    public List<FleetPoint> run() throws IOException, InterruptedException {
        List<FleetPoint> points = new ArrayList<>();
        MooncakeTrace trace = options.trace() == null ? null : MooncakeTrace.load(options.trace());
        for (String offload : options.offloads()) {
            for (String routing : options.routings()) {
                if (routing.equals("kvtier") && offload.equals("none")) {
                    continue; // nothing for it to price
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
        Path scratch = java.nio.file.Files.createDirectories(options.out().resolve("scratch"));
        KvtierNode node = null;
        List<EngineSim> engines = new ArrayList<>();
        RouterProcess router = null;
        try {
            if (!offload.equals("none")) {
                long scale = Math.max(1, Math.round(1 / options.bytesScale()));
                node = KvtierNode.start(options.launcher(), scratch.resolve("kvtier-" + offload.replace('+', '-')),
                        Math.max(1 << 20, options.memoryBytes() / scale), offload.equals("dram") ? 16L << 20
                                : Math.max(16L << 20, options.diskBytes() / scale));
            }
            List<URI> urls = new ArrayList<>();
            List<String> endpoints = new ArrayList<>();
            for (int i = 0; i < options.engines(); i++) {
                EngineSim e = startEngine(node, i);
                engines.add(e);
                urls.add(URI.create("http://127.0.0.1:" + e.port()));
                endpoints.add("http://127.0.0.1:" + e.port() + ",events=tcp://127.0.0.1:" + e.eventsPort());
            }
            if (!routing.equals("direct")) {
                router = RouterProcess.start(options.launcher(), scratch.resolve("router-" + routing + ".log"),
                        routing, endpoints, node == null ? null : "127.0.0.1:" + node.port() + ",events=tcp://127.0.0.1:"
                                + node.eventsPort(), options.servedName(), options.engine().tp(), options.chunkTokens(),
                        prefillRate());
                urls = List.of(router.url());
            }
            return measure(offload, routing, workload, urls, engines, node);
        } finally {
            if (router != null) {
                router.close();
            }
            for (EngineSim e : engines) {
                e.close();
            }
            if (node != null) {
                node.close();
            }
        }
    }

    private EngineSim startEngine(KvtierNode node, int index) throws IOException {
        EngineSimOptions.Offload offload = node == null ? null : options.engine().offload(new HostPort("127.0.0.1",
                node.port()), false, options.servedName(), options.chunkTokens(), 5_000_000_000L,
                Duration.ofSeconds(5), options.bytesScale());
        EngineSimOptions o = options.engine().options("127.0.0.1", 0, options.servedName(), 0, -1,
                "kv@engine-" + index + "@" + options.servedName(), Layout.MAP_V0_26, offload);
        return new EngineSim(o, Tokenizer.bytes(), ChatTemplate.builtin());
    }

    /** The modeled prefill rate of one engine for a 2,048-token prompt chunk, tokens/s (the kvtier policy's price). */
    private double prefillRate() {
        return 2048 / options.engine().roofline().seconds(StepBatch.EMPTY.plusPrefill(0, 2048));
    }

    private FleetPoint measure(String offload, String routing, FleetWorkload workload, List<URI> urls,
            List<EngineSim> engines, KvtierNode node) throws IOException, InterruptedException {
        List<EngineStats> before = engines.stream().map(EngineSim::stats).toList();
        KvtierNode.Hits hitsBefore = node == null ? new KvtierNode.Hits(0, 0) : node.hits();
        List<RequestResult> results = Collections.synchronizedList(new ArrayList<>());
        AtomicLong sent = new AtomicLong();
        AtomicLong done = new AtomicLong();
        long start = System.nanoTime();
        long counted = start + options.warmUp().toNanos();
        long end = start + options.duration().toNanos();
        try (FleetClient client = new FleetClient(urls, options.servedName(), options.requestTimeout(), 4096)) {
            RequestSender sender = r -> {
                sent.incrementAndGet();
                return client.send(r);
            };
            Thread killer = null;
            if (node != null && options.killAfter() != null) {
                KvtierNode n = node;
                killer = Thread.ofVirtual().start(() -> {
                    try {
                        Thread.sleep(options.killAfter());
                        log.printf("   kvtier node killed (SIGKILL) %.1f s into the point%n",
                                (System.nanoTime() - start) / 1e9);
                        n.kill();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            FleetProgress progress = new FleetProgress(log, workload.rateLabel(), start, end);
            CompletableFuture<Void> ticking = CompletableFuture.runAsync(() -> progress.tickUntil(done, results));
            workload.run(sender, end, r -> {
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
        synchronized (results) {
            measured = List.copyOf(results);
        }
        EngineCounters counters = counters(before, engines.stream().map(EngineSim::stats).toList(),
                node == null || !node.isAlive() ? null : node.hits().minus(hitsBefore));
        return new FleetPoint(offload, routing, workload.rateLabel(), workload.requestsPerSecond(), options.gpus(),
                LatencyStats.of(measured, seconds), counters);
    }

    /**
     * The fleet's counters over the point. Tokens loaded from kvtier are split between its tiers as the node counted
     * its chunk reads; without the node's counts (it was killed) they are all put under memory. Bytes are those moved
     * on this machine (a --kv-bytes-scale share of the real KV bytes).
     */
    static EngineCounters counters(List<EngineStats> before, List<EngineStats> after, KvtierNode.Hits hits) {
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
            lag += a.lagSeconds() - b.lagSeconds();
        }
        long memory = external;
        long disk = 0;
        if (hits != null && hits.memory() + hits.disk() > 0) {
            disk = Math.round((double) external * hits.disk() / (hits.memory() + hits.disk()));
            memory = external - disk;
        }
        return new EngineCounters(prompt, gpu, memory, disk, prefill, read, written, dropped, failures, preemptions,
                busy, lag);
    }
}
