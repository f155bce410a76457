package io.kvtier.router.events;

/**
 * One of vLLM's KV-cache events ({@code vllm/distributed/kv_events.py}): blocks stored, blocks removed, or the whole
 * prefix cache cleared. Block hashes are the engine's, as 64 bits: vLLM's int form (the digest's last 8 bytes, an
 * unsigned number kept here as a long's bits) or its bytes form folded by {@link VllmEventCodec#hashOf(byte[])} to the
 * same 64 bits.
 */
public sealed interface KvEvent permits KvEvent.BlockStored, KvEvent.BlockRemoved, KvEvent.AllBlocksCleared {

    /**
     * Consecutive full blocks an engine cached: {@code blockHashes.length} blocks of {@code blockSize} tokens whose
     * ids are {@code tokenIds}, the first following block {@code parentBlockHash} (null: the start of a prompt).
     * {@code extraKeys} holds, per block, the raw msgpack of the extra keys the engine hashed with its tokens (LoRA,
     * multimodal inputs, a cache salt), null where there were none or the engine did not say; null as a whole where the
     * event has no such field. Fields newer than an engine's vLLM are null.
     */
    record BlockStored(long[] blockHashes, Long parentBlockHash, int[] tokenIds, int blockSize, Long loraId,
            String medium, String loraName, byte[][] extraKeys, Long groupIdx, String kvCacheSpecKind,
            Long kvCacheSpecSlidingWindow) implements KvEvent {
    }

    /** Blocks an engine evicted from {@code medium} (null: the GPU, in vLLM before 0.11). */
    record BlockRemoved(long[] blockHashes, String medium, Long groupIdx) implements KvEvent {
    }

    /** The engine dropped its whole prefix cache. */
    record AllBlocksCleared() implements KvEvent {
    }
}
