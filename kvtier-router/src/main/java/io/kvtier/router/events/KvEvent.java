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
     * event has no such field. Fields newer than an engine's vLLM are null. {@code locality} ({@code LOCAL} or
     * {@code REMOTE}: whether the medium is local to the publishing engine), {@code ownership} (the secondary offload
     * tier that emitted the event) and {@code sessionId} (the request that stored or reused the blocks; not an owner,
     * a block may serve many) are vLLM 0.26's optional fields.
     */
    record BlockStored(long[] blockHashes, Long parentBlockHash, int[] tokenIds, int blockSize, Long loraId,
            String medium, String loraName, byte[][] extraKeys, Long groupIdx, String kvCacheSpecKind,
            Long kvCacheSpecSlidingWindow, String locality, String ownership, String sessionId) implements KvEvent {
        public BlockStored(long[] blockHashes, Long parentBlockHash, int[] tokenIds, int blockSize, Long loraId,
                String medium, String loraName, byte[][] extraKeys, Long groupIdx, String kvCacheSpecKind,
                Long kvCacheSpecSlidingWindow) {
            this(blockHashes, parentBlockHash, tokenIds, blockSize, loraId, medium, loraName, extraKeys, groupIdx,
                    kvCacheSpecKind, kvCacheSpecSlidingWindow, null, null, null);
        }
    }

    /**
     * Blocks an engine evicted from {@code medium} (null: the GPU, in vLLM before 0.11); {@code locality} and
     * {@code ownership} as in {@link BlockStored}.
     */
    record BlockRemoved(long[] blockHashes, String medium, Long groupIdx, String locality, String ownership)
            implements KvEvent {
        public BlockRemoved(long[] blockHashes, String medium, Long groupIdx) {
            this(blockHashes, medium, groupIdx, null, null);
        }
    }

    /** The engine dropped its whole prefix cache. */
    record AllBlocksCleared() implements KvEvent {
    }
}
