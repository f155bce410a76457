package io.kvtier.cli.router;

import io.kvtier.kvcache.key.LmcacheChunkKeys;
import io.kvtier.router.map.KvCacheMap;
import io.kvtier.router.map.LmcacheSettings;
import io.kvtier.router.map.StoreMap;
import io.kvtier.router.proxy.DnsDiscovery;
import io.kvtier.router.proxy.EngineEndpoint;
import io.kvtier.router.proxy.FetchProbes;
import io.kvtier.router.proxy.Fleet;
import io.kvtier.router.proxy.KvtierEndpoint;
import io.kvtier.router.proxy.Policy;
import io.kvtier.router.proxy.RouterOptions;
import io.kvtier.router.proxy.RouterServer;
import io.kvtier.router.proxy.StoreAwarePolicy;
import io.kvtier.router.proxy.StoreFeeds;
import io.kvtier.router.proxy.StorePrefetch;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvtier router}: the KV-cache-aware OpenAI proxy in front of vLLM engines (or {@code kvtier engine-sim}s),
 * following their KV events into the KV-cache map. Runs until interrupted. See docs/routing.md.
 */
@Command(name = "router", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"KV-cache-aware router: an OpenAI-compatible proxy (/v1/completions, /v1/chat/completions with "
                + "streaming passed through, /v1/models, /health, /metrics, /v1/kv/lookup) in front of N engines, "
                + "choosing each request's engine by --policy. See docs/routing.md.",
            "Example: kvtier router --engine http://10.0.0.5:8000,events=tcp://10.0.0.5:5557,replay=tcp://10.0.0.5:5558 "
                + "--engine http://10.0.0.6:8000,events=tcp://10.0.0.6:5557 --policy prefix"})
public final class RouterCommand implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "8080", description = "HTTP port (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--engine",
            paramLabel = "URL[,events=tcp://H:P][,replay=tcp://H:P][,topic=T][,dp=N[,dp-start=R]]",
            description = "An engine: its OpenAI base URL, and where it publishes vLLM's KV events (and answers "
                    + "replays); events=tcp://*:P: the router binds P and the engine connects (engines sharing P "
                    + "each with a topic=T of their own: vLLM's kv_events_config.topic, {host} the URL's host); "
                    + "dp=N: a data-parallel server, N engines (ranks R..R+N-1, events and replay on the ports plus "
                    + "the rank); repeat for each engine.")
    List<String> engines = List.of();

    @Option(names = "--engine-dns", paramLabel = "NAME:PORT[,events=[*:]PORT][,replay=PORT][,topic=T][,dp=N]",
            description = "Engines found by DNS (e.g. a Kubernetes headless Service): every address NAME resolves to "
                    + "is an engine at http://ADDRESS:PORT, its KV events and replay on those ports of the same "
                    + "address (events=*:PORT: the router binds PORT, every engine's publisher connects to it and "
                    + "publishes under topic= ({host}: its address; default kv@{host}@, as llm-d's pods do); dp=N: a "
                    + "data-parallel server, an engine per rank as --engine dp=N); resolved every --dns-interval, "
                    + "engines joining and leaving as addresses do; repeatable.")
    List<String> engineDns = List.of();

    @Option(names = "--fetch-probe-interval", defaultValue = "10000", paramLabel = "MS",
            description = "How often the fetch bandwidth of each --kvtier node's memory and disk is measured (one chunk "
                    + "GET each, timed), in milliseconds; 0: off, --fetch-bandwidth only (default: ${DEFAULT-VALUE}).")
    long fetchProbeInterval;

    @Option(names = "--dns-interval", defaultValue = "5000", paramLabel = "MS",
            description = "How often --engine-dns names are resolved, in milliseconds (default: ${DEFAULT-VALUE}).")
    long dnsInterval;

    @Option(names = "--policy", defaultValue = "prefix",
            description = "round-robin, least-load, prefix (GPU prefix from KV events, then load), approx-prefix "
                    + "(the router's own record of where it sent each prefix), llmd (llm-d's weighted prefix, "
                    + "KV-utilisation and queue scorers), dynamo (Dynamo's overlap-minus-load cost) or kvtier (time to "
                    + "first token priced from the GPU and CPU prefix, the chunks kvtier holds and their tier, the "
                    + "loads and prefill the engine still owes, and Dynamo's decode term at --decode-weight) "
                    + "(default: ${DEFAULT-VALUE}).")
    String policy;

    @Option(names = "--kvtier", paramLabel = "HOST:PORT,events=tcp://H:P[,replay=tcp://H:P]",
            description = "A kvtier node the engines' LMCache stores chunks in, and where it publishes store events "
                    + "(its --kv-events port; replays and snapshots on the port above); repeat for each node.")
    List<String> kvtierNodes = List.of();

    @Option(names = "--prefetch", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "kvtier policy: after routing a request, name the chunks its engine will load from a --kvtier "
                    + "node's disk to that node with KVC.PREFETCH, which copies them to memory before the engine asks "
                    + "(default: on; --no-prefetch: off).")
    boolean prefetch;

    @Option(names = "--kvtier-password", paramLabel = "PASSWORD", defaultValue = "${env:KVTIER_PASSWORD}",
            description = "The --kvtier nodes' --requirepass: sent with AUTH by the fetch probes and presented (ZMTP "
                    + "PLAIN) to their store-event ports, which ask for it; default: the KVTIER_PASSWORD environment "
                    + "variable (safer than the command line, which other users can see).")
    String kvtierPassword;

    @Option(names = "--lmcache-chunk-size", defaultValue = "256", paramLabel = "TOKENS",
            description = "LMCache's chunk_size (default: ${DEFAULT-VALUE}).")
    int lmcacheChunk;

    @Option(names = "--lmcache-hash", defaultValue = "builtin", paramLabel = "ALGORITHM",
            description = "LMCache's pre_caching_hash_algorithm: builtin or sha256_cbor (default: ${DEFAULT-VALUE}).")
    String lmcacheHash;

    @Option(names = "--lmcache-none-hash", paramLabel = "N",
            description = "The NONE_HASH LMCache logs at start; default: its value under PYTHONHASHSEED=0 (CPython "
                    + "3.11+ for builtin).")
    String lmcacheNoneHash;

    @Option(names = "--lmcache-model", paramLabel = "NAME",
            description = "The model name in LMCache's keys; default: the request's model.")
    String lmcacheModel;

    @Option(names = "--lmcache-dtype", defaultValue = "bfloat16",
            description = "The KV dtype in LMCache's keys (default: ${DEFAULT-VALUE}).")
    String lmcacheDtype;

    @Option(names = "--lmcache-world-size", defaultValue = "1",
            description = "The tensor-parallel world size in LMCache's keys (default: ${DEFAULT-VALUE}).")
    int lmcacheWorldSize;

    @Option(names = "--prefill-rate", defaultValue = "10000", paramLabel = "TOKENS/S",
            description = "kvtier policy: an engine's prefill throughput (default: ${DEFAULT-VALUE}).")
    double prefillRate;

    @Option(names = "--fetch-bandwidth", defaultValue = "memory=4e9,disk=1.2e9", paramLabel = "memory=B/S,disk=B/S",
            description = "kvtier policy: bytes per second an engine fetches chunks at from kvtier's memory and disk "
                    + "tiers, where --fetch-probe-interval has not measured a node's yet, or is 0 (default: "
                    + "${DEFAULT-VALUE}, measured on the benchmark machine, BENCHMARKS.md).")
    String fetchBandwidth;

    @Option(names = "--kv-bytes-scale", defaultValue = "1", paramLabel = "SHARE",
            description = "kvtier policy, for emulated fleets (bench fleet --kv-bytes-scale): the share of each "
                    + "chunk's real bytes the kvtier nodes hold, so that fetches are priced for the real bytes "
                    + "(default: ${DEFAULT-VALUE}: a real fleet's chunks are whole).")
    double kvBytesScale;

    @Option(names = "--decode-weight", defaultValue = "0.3", paramLabel = "W",
            description = "kvtier policy: what each prompt token in flight at an engine costs, as a share of a "
                    + "prefill token's price (Dynamo's decode term: 1 is Dynamo's balance of load against prefix, 0 "
                    + "prices the time to first token alone) (default: ${DEFAULT-VALUE}).")
    double decodeWeight;

    @Option(names = "--ttft-slack", defaultValue = "0.1", paramLabel = "SECONDS",
            description = "kvtier policy: how much later a first token may come than on the fastest engine for the "
                    + "decode term to choose: of the engines within it, the least cost goes first (default: "
                    + "${DEFAULT-VALUE}).")
    double ttftSlack;

    @Option(names = "--load-cost", defaultValue = "0.05", paramLabel = "SECONDS",
            description = "kvtier policy: seconds each request queued or running at an engine adds to its time to "
                    + "first token (default: ${DEFAULT-VALUE}).")
    double loadCost;

    @Option(names = "--request-timeout", defaultValue = "600", paramLabel = "SECONDS",
            description = "Longest a client is held, streamed or not (default: ${DEFAULT-VALUE}).")
    long requestTimeout;

    @Option(names = "--probe-interval", defaultValue = "1000", paramLabel = "MS",
            description = "How often each engine's health and load are read (default: ${DEFAULT-VALUE}).")
    long probeInterval;

    @Option(names = "--probe-timeout", defaultValue = "1000", paramLabel = "MS",
            description = "Bound on one probe, one connect, and one event replay (default: ${DEFAULT-VALUE}).")
    long probeTimeout;

    @Option(names = "--attempts", defaultValue = "3",
            description = "Engines tried for one request before its first byte (default: ${DEFAULT-VALUE}).")
    int attempts;

    @Option(names = "--max-imbalance", defaultValue = "8",
            description = "Requests a prefix holder may have beyond the least loaded engine and still be chosen "
                    + "(default: ${DEFAULT-VALUE}).")
    int maxImbalance;

    @Option(names = "--max-body", defaultValue = "67108864", paramLabel = "BYTES",
            description = "Largest request body accepted (default: ${DEFAULT-VALUE}).")
    int maxBody;


    @Option(names = "--state-file", paramLabel = "FILE",
            description = "Keep the KV-cache map in FILE: saved every --state-interval and on stop, read on start, "
                    + "so that a restarted router knows blocks older than the engines' replay buffers (each engine's "
                    + "saved entries are kept only if its replay confirms them). Default: none.")
    java.nio.file.Path stateFile;

    @Option(names = "--state-interval", defaultValue = "10", paramLabel = "SECONDS",
            description = "How often the map is saved to --state-file (default: ${DEFAULT-VALUE}).")
    int stateInterval;

    @picocli.CommandLine.Mixin
    PromptOptions prompts = new PromptOptions();

    /**
     * The engines of the --engine options, refusing two of one id (two entries of one URL: a data-parallel server is
     * one entry with dp=N), and two that bind one event endpoint unless each has a topic of its own.
     */
    static List<EngineEndpoint> engineEndpoints(List<String> specs) {
        List<EngineEndpoint> out = new java.util.ArrayList<>();
        java.util.Set<String> ids = new java.util.HashSet<>();
        java.util.Map<String, List<EngineEndpoint>> bound = new java.util.HashMap<>(); // by bound endpoint
        for (String spec : specs) {
            for (EngineEndpoint e : EngineEndpoint.parseAll(spec)) {
                if (!ids.add(e.id())) {
                    throw new IllegalArgumentException("--engine " + spec + ": engine " + e.id() + " is named twice"
                            + (e.dpRank() == null ? " (the data-parallel ranks of one server are one --engine with "
                            + "dp=N)" : ""));
                }
                if (e.bindEvents()) {
                    List<EngineEndpoint> sharing = bound.computeIfAbsent(e.events(), k -> new java.util.ArrayList<>());
                    for (EngineEndpoint other : sharing) {
                        if (e.topic().isEmpty() || other.topic().isEmpty() || e.topic().equals(other.topic())) {
                            throw new IllegalArgumentException("--engine " + spec + ": " + e.events() + " is bound "
                                    + "for " + other.id() + " already; engines that share a bound port each need a "
                                    + "topic of their own (topic=T, as their vLLM's kv_events_config.topic; llm-d's "
                                    + "pods publish under kv@POD_IP@MODEL: topic=kv@{host}@)");
                        }
                    }
                    sharing.add(e);
                }
                out.add(e);
            }
        }
        return out;
    }

    @Override
    public Integer call() throws Exception {
        LmcacheChunkKeys.Algorithm algorithm = LmcacheChunkKeys.Algorithm.parse(lmcacheHash);
        LmcacheSettings lmcache = new LmcacheSettings(lmcacheModel, lmcacheWorldSize, lmcacheDtype, lmcacheChunk,
                algorithm, lmcacheNoneHash == null ? algorithm.seedZeroNoneHash() : noneHash(lmcacheNoneHash));
        StoreAwarePolicy.Costs costs = costs();
        RouterOptions options = new RouterOptions(host, port, engineEndpoints(engines),
                policy, Duration.ofSeconds(requestTimeout), Duration.ofMillis(probeInterval),
                Duration.ofMillis(probeTimeout), maxBody, maxImbalance, attempts,
                kvtierNodes.stream().map(KvtierEndpoint::parse).toList(), lmcache, costs,
                engineDns.stream().map(DnsDiscovery.Target::parse).toList(), Duration.ofMillis(dnsInterval));
        if (!options.engineDns().isEmpty()) {
            // The JVM caches names for 30 s by default: fresh answers every interval, and no failure remembered.
            java.security.Security.setProperty("networkaddress.cache.ttl",
                    Long.toString(Math.max(1, options.dnsInterval().toSeconds() / 2)));
            java.security.Security.setProperty("networkaddress.cache.negative.ttl", "0");
        }
        lmcache.keys("validation", new int[0]); // the key parts are valid before anything starts
        KvCacheMap map = new KvCacheMap();
        StoreMap storeMap = new StoreMap();
        CountDownLatch stop = new CountDownLatch(1);
        if (fetchProbeInterval != 0 && fetchProbeInterval < 100) {
            throw new IllegalArgumentException("--fetch-probe-interval is 0 (off) or at least 100 ms");
        }
        // The fetch probes' and prefetches' wait for a kvtier node: the probe timeout, at least 2 s.
        Duration kvtierTimeout = options.probeTimeout().compareTo(Duration.ofSeconds(2)) > 0 ? options.probeTimeout()
                : Duration.ofSeconds(2);
        if (stateInterval < 1) {
            throw new IllegalArgumentException("--state-interval must be at least 1 second");
        }
        CountDownLatch closed = new CountDownLatch(1);
        try (Fleet fleet = new Fleet(options.engines(), map, options.probeInterval(), options.probeTimeout(),
                stateFile, Duration.ofSeconds(stateInterval));
                FetchProbes probes = options.kvtier().isEmpty() || fetchProbeInterval == 0 ? null
                        : new FetchProbes(options.kvtier(), storeMap, Duration.ofMillis(fetchProbeInterval),
                                kvtierTimeout, kvtierPassword);
                StorePrefetch storePrefetch = !prefetch || options.kvtier().isEmpty() || !policy.equals("kvtier") ? null
                        : new StorePrefetch(options.kvtier(), kvtierTimeout, kvtierPassword);
                RouterServer server = new RouterServer(options, fleet,
                        Policy.named(policy, map, maxImbalance, storeMap, lmcache, costs, probes),
                        prompts.tokenizer(), prompts.chatTemplate())) {
            fleet.attach(probes);
            fleet.attach(storePrefetch);
            if (!options.kvtier().isEmpty()) {
                fleet.attach(new StoreFeeds(options.kvtier(), storeMap, options.probeTimeout(), kvtierPassword));
            }
            if (!options.engineDns().isEmpty()) {
                fleet.attach(new DnsDiscovery(options.engineDns(), fleet, options.dnsInterval(), DnsDiscovery.system()));
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                stop.countDown();
                try { // the JVM halts once the hooks return: let the close (and its last save of the map) finish
                    closed.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            System.out.println("router on http://" + host + ":" + server.port() + ", policy " + policy + ", "
                    + options.engines().size() + " engines" + (options.engineDns().isEmpty() ? ""
                    : " and those DNS names " + options.engineDns().stream().map(DnsDiscovery.Target::name).toList()));
            stop.await();
        } finally {
            closed.countDown();
        }
        return 0;
    }

    /** A NONE_HASH as LMCache logs it: a signed decimal, or an unsigned one up to 2^64-1 (sha256_cbor). */
    static long noneHash(String text) {
        String t = text.trim();
        try {
            return t.startsWith("-") ? Long.parseLong(t) : Long.parseUnsignedLong(t);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--lmcache-none-hash '" + text + "' is not a 64-bit integer");
        }
    }

    private StoreAwarePolicy.Costs costs() {
        double memory = Double.NaN;
        double disk = Double.NaN;
        for (String part : fetchBandwidth.split(",")) {
            String[] kv = part.trim().split("=", 2);
            try {
                switch (kv.length == 2 ? kv[0].trim() : "") {
                    case "memory" -> memory = Double.parseDouble(kv[1].trim());
                    case "disk" -> disk = Double.parseDouble(kv[1].trim());
                    default -> throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--fetch-bandwidth '" + fetchBandwidth
                        + "': expected memory=BYTES/S,disk=BYTES/S");
            }
        }
        return new StoreAwarePolicy.Costs(prefillRate, memory, disk, loadCost, kvBytesScale, decodeWeight, ttftSlack);
    }
}
