package io.kvtier.router.map;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which engine holds which leading blocks of a prompt, on which medium: the engines' KV events applied in order, and
 * looked up by token ids. Thread-safe: each engine's events come from one thread (its subscriber), lookups from any.
 *
 * <p>Keys. Engines name blocks by their own hashes; the map names them by {@link PrefixHash}, a chain over the blocks'
 * token ids, so a prompt's blocks can be found from its tokens alone. A stored block's prefix hash is its parent's
 * (as that engine reported it) chained with its tokens; the engine's hash is kept only to remove the block by.
 *
 * <p>Bounds. An engine's entries are as many as the blocks it holds (its GPU pool: at most a few hundred thousand),
 * and go when it removes them, clears its cache, or is {@linkplain #removeEngine removed} (dead, or its event stream
 * lost). A lookup costs one hash per token and, per engine, one probe per block it holds plus one. Events for an
 * engine not tracked (removed while its subscriber still delivered) are dropped.
 */
public final class KvCacheMap {
    private final Map<String, EngineBlocks> engines = new ConcurrentHashMap<>();

    /** Starts tracking {@code engine}, which serves {@code model}; replaces (and so forgets) an engine of that id. */
    public void addEngine(String engine, String model) {
        engines.put(engine, new EngineBlocks(engine, model));
    }

    /** Stops tracking {@code engine} and drops its entries; false if it was not tracked. */
    public boolean removeEngine(String engine) {
        EngineBlocks e = engines.remove(engine);
        if (e != null) {
            e.clear();
        }
        return e != null;
    }

    /**
     * Blocks an engine stored: {@code engineHashes} consecutive blocks of {@code blockSize} tokens each, their token
     * ids in {@code tokens}, the first following the engine's block {@code parent} (null: the prompt's first block).
     * {@code salts} (nullable; 0 for none) is what else the engine hashed into each block, so that such blocks match no
     * lookup by tokens alone.
     */
    public void stored(String engine, String medium, long[] engineHashes, Long parent, int[] tokens, int blockSize,
            String lora, long[] salts) {
        EngineBlocks e = engines.get(engine);
        if (e != null) {
            e.stored(medium(medium), engineHashes, parent, tokens, blockSize, lora, salts);
        }
    }

    /** Blocks an engine evicted from {@code medium}. */
    public void removed(String engine, String medium, long[] engineHashes) {
        EngineBlocks e = engines.get(engine);
        if (e != null) {
            e.removed(medium(medium), engineHashes);
        }
    }

    /** {@code blocks} stored or removed on a medium not local to the engine ({@code locality: REMOTE}): counted. */
    public void remote(String engine, int blocks) {
        EngineBlocks e = engines.get(engine);
        if (e != null) {
            synchronized (e) {
                e.remote += blocks;
            }
        }
    }

    /** The engine cleared its whole cache, or its entries can no longer be trusted (an event gap, a restart). */
    public void cleared(String engine) {
        EngineBlocks e = engines.get(engine);
        if (e != null) {
            e.clear();
        }
    }

    /** {@code engine}'s entries as saved, with the feed's position and groups; null if it is not tracked. */
    MapSnapshot save(String engine, long seq, long digest, long[] groups) {
        EngineBlocks e = engines.get(engine);
        return e == null ? null : e.save(seq, digest, groups);
    }

    /** Puts back {@code saved}'s entries for its engine, tracked already (serving the saved model); false if not. */
    boolean restore(MapSnapshot saved) {
        EngineBlocks e = engines.get(saved.engine());
        if (e == null || !e.model.equals(saved.model())) {
            return false;
        }
        e.restore(saved);
        return true;
    }

    /** Per engine of {@code model} that holds any: how many leading tokens of {@code tokens} it holds, per medium. */
    public List<EnginePrefix> lookup(String model, String lora, int[] tokens) {
        long root = PrefixHash.root(lora);
        Map<Integer, long[]> chains = new java.util.HashMap<>();
        List<EnginePrefix> out = new ArrayList<>();
        for (EngineBlocks e : engines.values()) {
            int size = e.blockSize();
            if (!e.model.equals(model) || size == 0) {
                continue;
            }
            long[] chain = chains.computeIfAbsent(size, s -> PrefixHash.chain(root, tokens, s));
            Map<String, Integer> blocks = e.prefixBlocks(chain);
            if (!blocks.isEmpty()) {
                Map<String, Integer> prefix = new java.util.TreeMap<>();
                blocks.forEach((medium, n) -> prefix.put(medium, n * size));
                out.add(new EnginePrefix(e.engine, size, prefix));
            }
        }
        out.sort(java.util.Comparator.comparing(EnginePrefix::engine));
        return out;
    }

    /** The engines tracked, with their counters and blocks held per medium. */
    public List<EngineStats> stats() {
        List<EngineStats> out = new ArrayList<>();
        for (EngineBlocks e : engines.values()) {
            synchronized (e) {
                out.add(new EngineStats(e.engine, e.model, e.blockSize(), e.blocksByMedium(), e.stored, e.removed,
                        e.orphans, e.unknownRemovals, e.clears, e.remote));
            }
        }
        out.sort(java.util.Comparator.comparing(EngineStats::engine));
        return out;
    }

    /**
     * vLLM names the medium of a block (GPU, CPU) in upper case, or leaves it out on the GPU; a secondary tier's
     * {@code MEDIUM@ownership} keeps its owner's spelling.
     */
    static String medium(String medium) {
        if (medium == null || medium.isEmpty()) {
            return "GPU";
        }
        int at = medium.indexOf('@');
        return at < 0 ? medium.toUpperCase(java.util.Locale.ROOT)
                : medium.substring(0, at).toUpperCase(java.util.Locale.ROOT) + medium.substring(at);
    }

    /** How many leading tokens of a prompt one engine holds, per medium; tokens are whole blocks of {@code blockSize}. */
    public record EnginePrefix(String engine, int blockSize, Map<String, Integer> tokensByMedium) {
        public int tokens(String medium) {
            return tokensByMedium.getOrDefault(medium, 0);
        }
    }

    /** One engine's entries and what its events did ({@code remote}: blocks of non-local media, not credited). */
    public record EngineStats(String engine, String model, int blockSize, Map<String, Integer> blocksByMedium,
            long stored, long removed, long orphans, long unknownRemovals, long clears, long remote) {
    }
}
