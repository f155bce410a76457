package io.kvtier.bench.workload;

import java.util.List;

/**
 * One chat request: which conversation and turn, how long its prompt is, and its chunks' keys (without suffix)
 * in prompt order. Immutable.
 */
record ChatTurn(int conversation, int generation, int turn, int promptTokens, List<String> chunkKeys) {
    ChatTurn {
        chunkKeys = List.copyOf(chunkKeys);
    }
}
