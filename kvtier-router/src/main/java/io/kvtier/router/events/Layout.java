package io.kvtier.router.events;

/**
 * The wire layouts of vLLM's KV events, as its releases wrote them; the batch is a positional array in all of them.
 * The decoder reads every layout (telling them apart by msgpack container type and length); the encoder writes the one
 * asked for, byte for byte as vLLM's msgspec encoder does.
 */
public enum Layout {
    /** Events as arrays: tag, block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium (vLLM 0.11). */
    ARRAY_V0_11(7, 3),
    /** As {@link #ARRAY_V0_11} and lora_name (vLLM 0.15). */
    ARRAY_V0_15(8, 3),
    /**
     * As {@link #ARRAY_V0_15} and extra_keys, group_idx, kv_cache_spec_kind, kv_cache_spec_sliding_window; BlockRemoved
     * gains group_idx (vLLM 0.2x up to the switch to maps).
     */
    ARRAY_V0_23(12, 4),
    /** Events as maps keyed by field name, the tag under "type", null optional fields left out (vLLM 0.26 on). */
    MAP_V0_26(0, 0);

    final int storedLength;
    final int removedLength;

    Layout(int storedLength, int removedLength) {
        this.storedLength = storedLength;
        this.removedLength = removedLength;
    }
}
