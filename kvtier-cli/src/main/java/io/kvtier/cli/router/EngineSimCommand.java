package io.kvtier.cli.router;

import io.kvtier.router.events.Layout;
import io.kvtier.router.sim.EngineSim;
import io.kvtier.client.HostPort;
import io.kvtier.kvcache.sizing.ModelTable;
import io.kvtier.router.sim.EngineSimOptions;
import io.kvtier.router.sim.Gpu;
import io.kvtier.router.sim.ModeledEngine;
import io.kvtier.router.sim.StepCost;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvtier engine-sim}: an emulated vLLM engine (the OpenAI API, continuous batching over a GPU prefix cache,
 * vLLM's KV events over ZMQ, vLLM's load metrics) whose steps take the time a roofline of {@code --gpu} gives for the
 * model (or a flat per-token cost without {@code --gpu}), optionally offloading KV chunks to kvtier as LMCache does.
 * Runs until interrupted. See docs/routing.md and docs/fleet.md.
 */
@Command(name = "engine-sim", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"An emulated vLLM engine for routing tests and benchmarks: serves /v1/completions, "
                + "/v1/chat/completions (streaming too), /v1/models, /health and /metrics, schedules as vLLM does "
                + "(continuous batching, chunked prefill, prefix caching, preemption) and publishes vLLM's KV events "
                + "over ZMQ, byte for byte. No model runs: with --gpu a step takes what a roofline of that GPU gives "
                + "for the model, else --prefill-us per prompt token and --decode-us per step. With --kvtier it stores "
                + "and loads real KV chunks in kvtier as LMCache does. See docs/fleet.md.",
            "Example: kvtier engine-sim --gpu h100 --model meta-llama/Llama-3.1-8B-Instruct --kvtier 127.0.0.1:6379"})
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

    @Option(names = "--replay-buffer", defaultValue = "10000", paramLabel = "BATCHES",
            description = "Event batches kept for replays, as vLLM's buffer_steps (default: ${DEFAULT-VALUE}).")
    int replayBuffer;

    @Option(names = "--events-connect", paramLabel = "tcp://HOST:PORT",
            description = "Publish the KV events by connecting to this endpoint (a router's bound port: llm-d's "
                    + "centralized mode, as vLLM does where its endpoint names a host) instead of binding "
                    + "--events-port.")
    String eventsConnect;

    @Option(names = "--topic", description = "Topic of the events (default: kv@HOST:PORT@MODEL, llm-d's convention).")
    String topic;

    @Option(names = "--vllm-layout", defaultValue = "MAP_V0_26",
            description = "vLLM release whose event encoding to speak: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Layout layout;

    @Option(names = "--block-size", defaultValue = "16", description = "Tokens per KV block (default: ${DEFAULT-VALUE}).")
    int blockSize;

    @Option(names = "--gpu-blocks",
            description = "KV blocks the GPU holds; bounds the context too (default: as vLLM sizes them with --gpu, "
                    + "else 4096).")
    Integer gpuBlocks;

    @Option(names = "--max-seqs", defaultValue = "256",
            description = "Requests running at once, vLLM's max_num_seqs; more wait in arrival order (default: "
                    + "${DEFAULT-VALUE}).")
    int maxSeqs;

    @Option(names = "--max-batched-tokens", defaultValue = "8192",
            description = "Tokens one step computes at most, vLLM's max_num_batched_tokens (default: ${DEFAULT-VALUE}).")
    int maxBatchedTokens;

    @Option(names = "--gpu", description = "Model the step time as a roofline of this GPU: l4, a100, h100, h200; "
            + "--model must then be in `kvtier size`'s table (its short name or Hugging Face id).")
    String gpu;

    @Option(names = "--gpu-calibration", paramLabel = "FILE", description = "With --gpu: what bench/gpu-calibrate.py measured "
            + "on this GPU (its JSON): the roofline takes its compute efficiency and the CPU tiers its pinned "
            + "host-to-device rate (default: the datasheet and published anchors, docs/fleet.md).")
    java.nio.file.Path gpuCalibration;

    @Option(names = "--tp", defaultValue = "1", description = "Tensor parallelism with --gpu (default: ${DEFAULT-VALUE}).")
    int tp;

    @Option(names = "--gpu-memory-utilization", defaultValue = "0.9",
            description = "Share of GPU memory vLLM takes, with --gpu (default: ${DEFAULT-VALUE}).")
    double memoryUtilization;

    @Option(names = "--kvtier", paramLabel = "HOST:PORT",
            description = "Offload KV chunks to kvtier here as LMCache's redis:// connector does (needs --gpu).")
    String kvtier;

    @Option(names = "--kvtier-cluster", description = "The --kvtier node is a cluster node: route by slot.")
    boolean kvtierCluster;

    @Option(names = "--load-mode", defaultValue = "sync",
            description = io.kvtier.router.sim.LoadMode.FLAG_DESCRIPTION)
    String loadMode;

    @Option(names = "--lmcache-chunk-size", defaultValue = "256",
            description = "Tokens per LMCache chunk (default: ${DEFAULT-VALUE}).")
    int chunkTokens;

    @Option(names = "--prefill-us", defaultValue = "50",
            description = "Without --gpu: microseconds of a step per prompt token computed (default: ${DEFAULT-VALUE}).")
    long prefillMicros;

    @Option(names = "--decode-us", defaultValue = "20000",
            description = "Without --gpu: microseconds of a step that decodes (default: ${DEFAULT-VALUE}).")
    long decodeMicros;


    @picocli.CommandLine.Mixin
    PromptOptions prompts = new PromptOptions();

    @Override
    public Integer call() throws Exception {
        String t = topic != null ? topic : "kv@" + host + ":" + port + "@" + model;
        EngineSimOptions options;
        if (gpu == null) {
            if (gpuCalibration != null) {
                throw new IllegalArgumentException("--gpu-calibration needs --gpu: it calibrates the GPU's roofline");
            }
            if (kvtier != null) {
                throw new IllegalArgumentException("--kvtier needs --gpu: chunk sizes come from the modeled model");
            }
            options = new EngineSimOptions(host, port, model, eventsPort, replayPort, t, layout, blockSize,
                    gpuBlocks == null ? 4096 : gpuBlocks, maxSeqs, maxBatchedTokens,
                    StepCost.perToken(prefillMicros, decodeMicros), null);
        } else {
            Gpu modeled = Gpu.parse(gpu);
            ModeledEngine engine = new ModeledEngine(ModelTable.find(model), modeled, tp, memoryUtilization,
                    2L << 30, blockSize, maxSeqs, maxBatchedTokens, gpuCalibration == null ? null
                            : io.kvtier.router.sim.GpuCalibration.read(gpuCalibration, modeled));
            EngineSimOptions.Offload offload = kvtier == null ? null : engine.offload(HostPort.parse(kvtier,
                    "--kvtier"), kvtierCluster, model, chunkTokens, 5_000_000_000L, Duration.ofSeconds(2), 1.0)
                    .withLoadMode(io.kvtier.router.sim.LoadMode.of(loadMode), engine.model().attention().layers());
            options = engine.options(host, port, model, eventsPort, replayPort, t, layout, offload);
            if (gpuBlocks != null) {
                options = new EngineSimOptions(host, port, model, eventsPort, replayPort, t, layout, blockSize,
                        gpuBlocks, maxSeqs, maxBatchedTokens, options.cost(), offload);
            }
        }
        options = options.withReplayBuffer(replayBuffer).withEventsConnect(eventsConnect);
        CountDownLatch stop = new CountDownLatch(1);
        try (EngineSim sim = new EngineSim(options, prompts.tokenizer(), prompts.chatTemplate())) {
            Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
            System.out.println("engine-sim " + model + " on http://" + host + ":" + sim.port() + ", KV events "
                    + (eventsConnect != null ? "published to " + eventsConnect : "on tcp://" + host + ":"
                    + sim.eventsPort()) + (sim.replayPort() < 0 ? "" : ", replay tcp://" + host + ":"
                    + sim.replayPort()) + " (topic " + t + ")");
            stop.await();
        }
        return 0;
    }
}
