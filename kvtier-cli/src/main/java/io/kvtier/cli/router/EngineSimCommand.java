package io.kvtier.cli.router;

import io.kvtier.router.events.Layout;
import io.kvtier.router.sim.EngineSim;
import io.kvtier.router.sim.EngineSimOptions;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvtier engine-sim}: an emulated vLLM engine (the OpenAI API, a GPU prefix cache, vLLM's KV events over ZMQ,
 * vLLM's load metrics) whose answers take the time a per-token cost model gives; for the router's tests and
 * benchmarks. Runs until interrupted. See docs/routing.md.
 */
@Command(name = "engine-sim", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"An emulated vLLM engine for routing tests and benchmarks: serves /v1/completions, "
                + "/v1/chat/completions (streaming too), /v1/models, /health and /metrics, keeps a GPU block pool "
                + "with prefix caching, and publishes vLLM's KV events over ZMQ, byte for byte. No model runs: "
                + "prefill and decode take --prefill-us and --decode-us per token. See docs/routing.md.",
            "Example: kvtier engine-sim --port 8001 --events-port 5557 --replay-port 5558 --model meta-llama/Llama-3.1-8B"})
public final class EngineSimCommand implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "8000", description = "HTTP port (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--model", defaultValue = "sim-model", description = "Model name served (default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--events-port", defaultValue = "5557",
            description = "ZMQ PUB port of the KV events, vLLM's default (default: ${DEFAULT-VALUE}).")
    int eventsPort;

    @Option(names = "--replay-port", defaultValue = "5558",
            description = "ZMQ ROUTER port answering replay requests; -1: none (default: ${DEFAULT-VALUE}).")
    int replayPort;

    @Option(names = "--topic", description = "Topic of the events (default: kv@HOST:PORT@MODEL, llm-d's convention).")
    String topic;

    @Option(names = "--vllm-layout", defaultValue = "MAP_V0_26",
            description = "vLLM release whose event encoding to speak: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Layout layout;

    @Option(names = "--block-size", defaultValue = "16", description = "Tokens per KV block (default: ${DEFAULT-VALUE}).")
    int blockSize;

    @Option(names = "--gpu-blocks", defaultValue = "4096",
            description = "KV blocks the GPU holds; bounds the context too (default: ${DEFAULT-VALUE}).")
    int gpuBlocks;

    @Option(names = "--max-seqs", defaultValue = "64",
            description = "Requests running at once; more wait in arrival order (default: ${DEFAULT-VALUE}).")
    int maxSeqs;

    @Option(names = "--prefill-us", defaultValue = "50",
            description = "Microseconds of prefill per prompt token not cached (default: ${DEFAULT-VALUE}).")
    long prefillMicros;

    @Option(names = "--decode-us", defaultValue = "20000",
            description = "Microseconds per generated token (default: ${DEFAULT-VALUE}).")
    long decodeMicros;


    @picocli.CommandLine.Mixin
    PromptOptions prompts = new PromptOptions();

    @Override
    public Integer call() throws Exception {
        String t = topic != null ? topic : "kv@" + host + ":" + port + "@" + model;
        EngineSimOptions options = new EngineSimOptions(host, port, model, eventsPort, replayPort, t, layout,
                blockSize, gpuBlocks, maxSeqs, prefillMicros, decodeMicros);
        CountDownLatch stop = new CountDownLatch(1);
        try (EngineSim sim = new EngineSim(options, prompts.tokenizer(), prompts.chatTemplate())) {
            Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
            System.out.println("engine-sim " + model + " on http://" + host + ":" + sim.port() + ", KV events on tcp://"
                    + host + ":" + sim.eventsPort() + (sim.replayPort() < 0 ? "" : ", replay tcp://" + host + ":"
                    + sim.replayPort()) + " (topic " + t + ")");
            stop.await();
        }
        return 0;
    }
}
