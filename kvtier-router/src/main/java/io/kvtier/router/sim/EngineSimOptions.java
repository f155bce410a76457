package io.kvtier.router.sim;

import io.kvtier.router.events.Layout;

/**
 * How an emulated engine is set up: where it listens, the model it claims to serve, its GPU block pool, the cost of
 * prefill and decode, and the vLLM release its KV events speak as. Validated on construction.
 *
 * @param eventsPort  the ZMQ PUB port (vLLM's default 5557; 0: any free port)
 * @param replayPort  the ZMQ ROUTER port for replays (0: any free port; -1: none)
 * @param topic       the events' topic (llm-d's convention {@code kv@<pod>@<model>})
 */
public record EngineSimOptions(String host, int port, String model, int eventsPort, int replayPort, String topic,
        Layout layout, int blockSize, int gpuBlocks, int maxSeqs, long prefillMicrosPerToken,
        long decodeMicrosPerToken) {
    public EngineSimOptions {
        check(port >= 0 && port < 65536, "--port " + port + " is not a port");
        check(eventsPort >= 0 && eventsPort < 65536, "--events-port " + eventsPort + " is not a port");
        check(replayPort >= -1 && replayPort < 65536, "--replay-port " + replayPort + " is not a port (or -1)");
        check(blockSize >= 1 && blockSize <= 1024, "--block-size " + blockSize + " is not within 1..1024");
        check(gpuBlocks >= 1, "--gpu-blocks " + gpuBlocks + " must be at least 1");
        check(maxSeqs >= 1, "--max-seqs " + maxSeqs + " must be at least 1");
        check(prefillMicrosPerToken >= 0 && decodeMicrosPerToken >= 0, "per-token times must not be negative");
        check(model != null && !model.isBlank(), "--model must name the model served");
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** An engine on loopback with free ports, vLLM's block size 16 and a fast cost model: for tests. */
    public static EngineSimOptions forTest(String model, int gpuBlocks) {
        return new EngineSimOptions("127.0.0.1", 0, model, 0, 0, "kv@sim@" + model, Layout.MAP_V0_26, 16, gpuBlocks,
                64, 20, 200);
    }
}
