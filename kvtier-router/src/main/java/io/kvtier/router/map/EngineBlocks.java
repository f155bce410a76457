package io.kvtier.router.map;

import java.util.Map;
import java.util.TreeMap;

/**
 * What one engine holds, per medium ({@code GPU}, or {@code CPU} for vLLM's own CPU offload), as its KV events told
 * the map, with the block size its events carry. Guarded by its own monitor: events for one engine are applied by one
 * subscriber thread, lookups read it from any thread.
 */
final class EngineBlocks {
    final String engine;
    final String model;
    private final Map<String, HeldBlocks> media = new TreeMap<>();
    /** The block size that hash-only stores of a medium named (an offloaded block of k GPU blocks), where they did. */
    private final Map<String, Integer> hashOnlyBlockSizes = new TreeMap<>();
    private int blockSize;
    long stored;
    long removed;
    long orphans;
    long unknownRemovals;
    long clears;
    long remote;

    EngineBlocks(String engine, String model) {
        this.engine = engine;
        this.model = model;
    }

    synchronized int blockSize() {
        return blockSize;
    }

    /**
     * Records blocks {@code engineHashes} (consecutive, the first one following {@code parent}, or the prompt's start
     * where {@code parent} is null), holding {@code tokens} in blocks of {@code size}. Blocks whose parent the map does
     * not know cannot be placed in a prompt and are counted as orphans: the engine stored the parent before the map
     * listened, or its event was lost.
     */
    synchronized void stored(String medium, long[] engineHashes, Long parent, int[] tokens, int size, String lora,
            long[] salts) {
        if (tokens.length == 0) { // by hash alone (none at all: nothing to do)
            storedByHash(medium, engineHashes, size);
            return;
        }
        if (size <= 0 || (long) size * engineHashes.length != tokens.length) {
            throw new IllegalArgumentException(engine + ": " + engineHashes.length + " blocks of " + size
                    + " tokens do not match " + tokens.length + " token ids");
        }
        if (blockSize != size) {
            if (blockSize != 0) {
                clear(); // another block size: an engine restarted with other settings, nothing held is comparable
            }
            blockSize = size;
        }
        HeldBlocks held = media.computeIfAbsent(medium, m -> new HeldBlocks());
        long prefix;
        if (parent == null) {
            prefix = PrefixHash.root(lora);
        } else if (held.knows(parent)) {
            prefix = held.prefixOf(parent);
        } else {
            orphans += engineHashes.length;
            return;
        }
        for (int b = 0; b < engineHashes.length; b++) {
            prefix = PrefixHash.next(prefix, tokens, b * size, (b + 1) * size);
            if (salts != null && salts[b] != 0) {
                prefix = PrefixHash.salted(prefix, salts[b]);
            }
            held.add(engineHashes[b], prefix);
        }
        stored += engineHashes.length;
    }

    /**
     * Blocks stored with their hashes only: vLLM's OffloadingConnector reports what it copied to its CPU tier that way
     * ({@code token_ids} empty, no parent, {@code block_size} 0 or the offloaded block's size). Each hash is the hash
     * of a block the engine computed on its GPU (for an offloaded block of k GPU blocks, the hash of its last one, whose
     * last 8 bytes are what the map keys by), so it takes that block's prefix hash from the medium that knows it; one
     * no medium knows (the GPU block was evicted before the map listened) is counted as an orphan, not placed. Nothing
     * is cleared and the block size of GPU events is left alone.
     */
    private void storedByHash(String medium, long[] engineHashes, int size) {
        HeldBlocks held = media.computeIfAbsent(medium, m -> new HeldBlocks());
        if (size > 0) {
            hashOnlyBlockSizes.put(medium, size);
        }
        for (long h : engineHashes) {
            if (held.knows(h)) {
                continue; // stored again
            }
            HeldBlocks source = null;
            for (Map.Entry<String, HeldBlocks> other : media.entrySet()) {
                if (other.getValue() != held && other.getValue().knows(h)) {
                    source = other.getValue();
                    break;
                }
            }
            if (source == null) {
                orphans++; // cannot be placed in a prompt, as a block whose parent is unknown
            } else {
                held.add(h, source.prefixOf(h));
                stored++;
            }
        }
    }

    synchronized void removed(String medium, long[] engineHashes) {
        HeldBlocks held = media.get(medium);
        for (long h : engineHashes) {
            if (held != null && held.remove(h)) {
                removed++;
            } else {
                unknownRemovals++;
            }
        }
    }

    /** Forgets everything: the engine cleared its cache, restarted, or the map lost track of its events. */
    synchronized void clear() {
        forget();
        clears++;
    }

    private void forget() {
        media.values().forEach(HeldBlocks::clear);
        media.clear();
        hashOnlyBlockSizes.clear();
    }

    /**
     * How many leading blocks of {@code prefixHashes} this engine holds on each medium (media holding none left out).
     * A medium whose blocks span k of the prompt's blocks (a CPU tier offloading blocks of k GPU blocks, as its
     * events' block size says) holds the prefix hash of every k-th one, the k-th, 2k-th, ...; where the events gave
     * no size (0), k is taken as 1, which can only under-count.
     */
    synchronized Map<String, Integer> prefixBlocks(long[] prefixHashes) {
        Map<String, Integer> out = new TreeMap<>();
        media.forEach((medium, held) -> {
            Integer unit = hashOnlyBlockSizes.get(medium);
            int stride = unit != null && blockSize > 0 && unit % blockSize == 0 ? unit / blockSize : 1;
            int n = 0;
            while (n + stride <= prefixHashes.length && held.holds(prefixHashes[n + stride - 1])) {
                n += stride;
            }
            if (n > 0) {
                out.put(medium, n);
            }
        });
        return out;
    }

    /** What this engine holds, as saved (the feed's position and groups given by its caller). */
    synchronized MapSnapshot save(long seq, long digest, long[] groups) {
        Map<String, long[]> saved = new TreeMap<>();
        media.forEach((medium, held) -> saved.put(medium, held.pairs()));
        return new MapSnapshot(engine, model, seq, digest, blockSize, groups, new TreeMap<>(hashOnlyBlockSizes),
                saved);
    }

    /** Replaces what this engine holds by what was saved. */
    synchronized void restore(MapSnapshot s) {
        forget(); // not a clear the engine's events asked for: not counted as one
        blockSize = s.blockSize();
        hashOnlyBlockSizes.putAll(s.hashOnlyBlockSizes());
        s.media().forEach((medium, pairs) -> {
            HeldBlocks held = media.computeIfAbsent(medium, m -> new HeldBlocks());
            for (int i = 0; i + 1 < pairs.length; i += 2) {
                held.add(pairs[i], pairs[i + 1]);
            }
        });
    }

    synchronized Map<String, Integer> blocksByMedium() {
        Map<String, Integer> out = new TreeMap<>();
        media.forEach((medium, held) -> out.put(medium, held.size()));
        return out;
    }
}
