package io.kvtier.cli.router;

import io.kvtier.router.map.KvCacheMap;
import io.kvtier.router.proxy.EngineEndpoint;
import io.kvtier.router.proxy.Fleet;
import io.kvtier.router.proxy.Policy;
import io.kvtier.router.proxy.RouterOptions;
import io.kvtier.router.proxy.RouterServer;
import io.kvtier.router.tokens.Tokenizer;
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

    @Option(names = "--engine", required = true, paramLabel = "URL[,events=tcp://H:P][,replay=tcp://H:P]",
            description = "An engine: its OpenAI base URL, and where it publishes vLLM's KV events (and answers "
                    + "replays); repeat for each engine.")
    List<String> engines;

    @Option(names = "--policy", defaultValue = "prefix",
            description = "round-robin, least-load, prefix (GPU prefix from KV events, then load) or approx-prefix "
                    + "(the router's own record of where it sent each prefix) (default: ${DEFAULT-VALUE}).")
    String policy;

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


    @Option(names = "--tokenizer", paramLabel = "PATH",
            description = "The model's tokenizer.json (or a directory holding one), to turn text prompts into the "
                    + "model's token ids; default: one token per UTF-8 byte, as engine-sim without it.")
    java.nio.file.Path tokenizer;

    @Override
    public Integer call() throws Exception {
        RouterOptions options = new RouterOptions(host, port, engines.stream().map(EngineEndpoint::parse).toList(),
                policy, Duration.ofSeconds(requestTimeout), Duration.ofMillis(probeInterval),
                Duration.ofMillis(probeTimeout), maxBody, maxImbalance, attempts);
        KvCacheMap map = new KvCacheMap();
        CountDownLatch stop = new CountDownLatch(1);
        try (Fleet fleet = new Fleet(options.engines(), map, options.probeInterval(), options.probeTimeout());
                RouterServer server = new RouterServer(options, fleet, Policy.named(policy, map, maxImbalance),
                        tokenizer == null ? Tokenizer.bytes() : Tokenizer.load(tokenizer))) {
            Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
            System.out.println("router on http://" + host + ":" + server.port() + ", policy " + policy + ", "
                    + options.engines().size() + " engines");
            stop.await();
        }
        return 0;
    }
}
