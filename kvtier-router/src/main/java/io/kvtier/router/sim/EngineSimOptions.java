package io.kvtier.router.sim;

import io.kvtier.client.HostPort;
import io.kvtier.router.events.Layout;
import java.time.Duration;
import java.util.Objects;

/**
 * How an emulated engine is set up: where it listens, the model it claims to serve, its GPU block pool, its
 * scheduler's limits, the cost model of a step, the vLLM release its KV events speak as, and its offload path to
 * kvtier (null: none). Validated on construction.
 *
 * @param eventsPort       the ZMQ PUB port (vLLM's default 5557; 0: any free port)
 * @param replayPort       the ZMQ ROUTER port for replays (0: any free port; -1: none)
 * @param topic            the events' topic (llm-d's convention {@code kv@<pod>@<model>})
 * @param maxBatchedTokens vLLM's max_num_batched_tokens: tokens one step computes at most
 * @param replayBuffer     batches kept for replays (vLLM's buffer_steps, 10,000 by default)
 * @param eventsConnect    where the publisher connects instead of binding {@code eventsPort} (vLLM connects where its
 *                         endpoint names a host: a router's bound port, llm-d's centralized mode); null: it binds
 */
public record EngineSimOptions(String host, int port, String model, int eventsPort, int replayPort, String topic,
        Layout layout, int blockSize, int gpuBlocks, int maxSeqs, int maxBatchedTokens, StepCost cost,
        Offload offload, int replayBuffer, String eventsConnect) {
    /** vLLM's default buffer_steps. */
    public static final int REPLAY_BUFFER = 10_000;

    public EngineSimOptions(String host, int port, String model, int eventsPort, int replayPort, String topic,
            Layout layout, int blockSize, int gpuBlocks, int maxSeqs, int maxBatchedTokens, StepCost cost,
            Offload offload) {
        this(host, port, model, eventsPort, replayPort, topic, layout, blockSize, gpuBlocks, maxSeqs, maxBatchedTokens,
                cost, offload, REPLAY_BUFFER);
    }

    public EngineSimOptions(String host, int port, String model, int eventsPort, int replayPort, String topic,
            Layout layout, int blockSize, int gpuBlocks, int maxSeqs, int maxBatchedTokens, StepCost cost,
            Offload offload, int replayBuffer) {
        this(host, port, model, eventsPort, replayPort, topic, layout, blockSize, gpuBlocks, maxSeqs, maxBatchedTokens,
                cost, offload, replayBuffer, null);
    }

    public EngineSimOptions {
        check(replayBuffer >= 1, "--replay-buffer " + replayBuffer + " must be at least 1");
        check(eventsConnect == null || eventsConnect.matches("tcp://[^*]+:[0-9]{1,5}"),
                "--events-connect " + eventsConnect + " is not tcp://HOST:PORT");
        check(port >= 0 && port < 65536, "--port " + port + " is not a port");
        check(eventsPort >= 0 && eventsPort < 65536, "--events-port " + eventsPort + " is not a port");
        check(replayPort >= -1 && replayPort < 65536, "--replay-port " + replayPort + " is not a port (or -1)");
        check(blockSize >= 1 && blockSize <= 1024, "--block-size " + blockSize + " is not within 1..1024");
        check(gpuBlocks >= 1, "--gpu-blocks " + gpuBlocks + " must be at least 1");
        check(maxSeqs >= 1, "--max-seqs " + maxSeqs + " must be at least 1");
        check(maxBatchedTokens >= 1, "--max-batched-tokens " + maxBatchedTokens + " must be at least 1");
        check(model != null && !model.isBlank(), "--model must name the model served");
        Objects.requireNonNull(cost, "cost");
    }

    /**
     * The LMCache-like offload path: kvtier's address (a node, or a cluster's entry node), LMCache's key parts and
     * chunking, one worker's bytes per chunk, and the connector's bounds.
     *
     * @param lmcacheModel  the model name in LMCache's keys
     * @param tp            tensor-parallel workers: each stores its own value per chunk
     * @param chunkTokens   LMCache's chunk_size (256)
     * @param chunkBytes    one worker's KV bytes of one chunk
     * @param bufferBytes   most real bytes queued for storing (LMCache's local CPU buffer); beyond it, chunks are not
     *                      stored
     * @param connections   connections to kvtier
     * @param bytesScale    share of each chunk's real bytes actually moved (1: all); a load's measured time is divided
     *                      by it, so that a machine too small to move a fleet's real bytes still times each transfer
     *                      at its own measured speed, and the store buffer holds as many chunks as it would
     *                      (docs/fleet.md says where this is used)
     * @param sharedMemory  chunk bytes through the node's shared memory (a node on this host with --shm yes; KVC.SHM)
     *                      instead of GET and SET; lookups and metadata stay on RESP
     * @param loadMode      how the engine waits for loads ({@link LoadMode})
     * @param layers        the model's layers: LAYERWISE pipelines a step's load over them
     * @param localCpuBytes the engine's own CPU tier instead of kvtier (0: kvtier), real bytes ({@link LocalCpuCache})
     * @param hostBytesPerSecond that tier's host-to-device rate
     */
    public record Offload(HostPort kvtier, boolean cluster, String lmcacheModel, int tp, String dtype,
                          int chunkTokens, long chunkBytes, long bufferBytes, Duration timeout, int connections,
                          double bytesScale, boolean sharedMemory, LoadMode loadMode, int layers,
                          long localCpuBytes, double hostBytesPerSecond) {
        public Offload {
            Objects.requireNonNull(loadMode, "loadMode");
            check(localCpuBytes >= 0, "the local CPU tier's size " + localCpuBytes + " is negative");
            check(localCpuBytes == 0 || hostBytesPerSecond > 0, "a local CPU tier needs a host-to-device rate");
            check(layers >= 1, "layers " + layers + " must be at least 1");
            check(!(sharedMemory && cluster), "shared memory is for a single kvtier node, not a cluster");
            check(bytesScale > 0 && bytesScale <= 1, "--kv-bytes-scale " + bytesScale + " is not within (0, 1]");
            check(kvtier != null || localCpuBytes > 0, "kvtier's address is required");
            check(tp >= 1, "--tp " + tp + " must be at least 1");
            check(chunkTokens >= 1, "--lmcache-chunk-size " + chunkTokens + " must be at least 1");
            check(chunkBytes >= 1024, "a chunk of " + chunkBytes + " bytes is too small to be a chunk");
            check(bufferBytes >= chunkBytes * tp, "--offload-buffer must hold at least one chunk of every worker ("
                    + chunkBytes * tp + " bytes)");
            check(connections >= 1, "connections to kvtier must be at least 1");
            check(timeout != null && !timeout.isNegative() && !timeout.isZero(), "the kvtier timeout must be positive");
        }

        /** Chunk bytes over RESP. */
        public Offload(HostPort kvtier, boolean cluster, String lmcacheModel, int tp, String dtype, int chunkTokens,
                       long chunkBytes, long bufferBytes, Duration timeout, int connections, double bytesScale) {
            this(kvtier, cluster, lmcacheModel, tp, dtype, chunkTokens, chunkBytes, bufferBytes, timeout, connections,
                    bytesScale, false, LoadMode.SYNC, 32, 0, 0);
        }

        /** This offload with chunk bytes through the node's shared memory ({@code true}) or over RESP. */
        public Offload withSharedMemory(boolean shared) {
            return new Offload(kvtier, cluster, lmcacheModel, tp, dtype, chunkTokens, chunkBytes, bufferBytes, timeout,
                    connections, bytesScale, shared, loadMode, layers, localCpuBytes, hostBytesPerSecond);
        }

        /** This offload loading in {@code mode}, over a model of {@code layers} layers (LAYERWISE's pipeline). */
        public Offload withLoadMode(LoadMode mode, int layers) {
            return new Offload(kvtier, cluster, lmcacheModel, tp, dtype, chunkTokens, chunkBytes, bufferBytes, timeout,
                    connections, bytesScale, sharedMemory, mode, layers, localCpuBytes, hostBytesPerSecond);
        }

        /**
         * This offload to the engine's own CPU memory instead of kvtier ({@link LocalCpuCache}): {@code bytes} of
         * it, loads at {@code bytesPerSecond}.
         */
        public Offload withLocalCpu(long bytes, double bytesPerSecond) {
            return new Offload(kvtier, false, lmcacheModel, tp, dtype, chunkTokens, chunkBytes, bufferBytes, timeout,
                    connections, bytesScale, false, loadMode, layers, bytes, bytesPerSecond);
        }
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** The context length this engine accepts: what its GPU blocks hold. */
    public long maxModelLength() {
        return (long) gpuBlocks * blockSize;
    }

    /** The same engine with another offload path. */
    public EngineSimOptions withOffload(Offload other) {
        return new EngineSimOptions(host, port, model, eventsPort, replayPort, topic, layout, blockSize, gpuBlocks,
                maxSeqs, maxBatchedTokens, cost, other, replayBuffer, eventsConnect);
    }

    /** The same engine keeping {@code batches} for replays. */
    public EngineSimOptions withReplayBuffer(int batches) {
        return new EngineSimOptions(host, port, model, eventsPort, replayPort, topic, layout, blockSize, gpuBlocks,
                maxSeqs, maxBatchedTokens, cost, offload, batches, eventsConnect);
    }

    /** The same engine publishing to {@code endpoint} (connecting to it), or binding its events port (null). */
    public EngineSimOptions withEventsConnect(String endpoint) {
        return new EngineSimOptions(host, port, model, eventsPort, replayPort, topic, layout, blockSize, gpuBlocks,
                maxSeqs, maxBatchedTokens, cost, offload, replayBuffer, endpoint);
    }

    /** An engine on loopback with free ports, vLLM's block size 16 and a fast per-token cost model: for tests. */
    public static EngineSimOptions forTest(String model, int gpuBlocks) {
        return new EngineSimOptions("127.0.0.1", 0, model, 0, 0, "kv@sim@" + model, Layout.MAP_V0_26, 16, gpuBlocks,
                64, 8192, StepCost.perToken(20, 200), null);
    }
}
