package io.kvtier.cli.simulate;

import static io.kvtier.common.Json.object;

import io.kvtier.common.Json;
import io.kvtier.kvcache.simulate.BlockTrace;
import io.kvtier.kvcache.simulate.ChunkOptions;
import io.kvtier.kvcache.simulate.ChunkedTrace;
import io.kvtier.kvcache.simulate.SimulationResult;
import io.kvtier.kvcache.simulate.Sweep;
import io.kvtier.kvcache.simulate.Trace;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code kvtier simulate --json}: the trace, the chunking, the unlimited ceiling and one object per budget, with
 * the table's figures in exact units (bytes, tokens, rates 0..1); a trace of blocks (Mooncake's format) adds its
 * block counts and each budget's hit blocks / looked-up blocks. Field names are stable; {@code format} names the
 * version. A pure function of its arguments.
 */
final class SweepJson {
    static final String FORMAT = "kvtier-simulate/1";

    private SweepJson() {
    }

    static String format(String traceName, ChunkedTrace trace, ChunkOptions chunks, Sweep.Outcome outcome,
                         String chart) {
        boolean blocks = trace instanceof BlockTrace;
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("format", FORMAT);
        o.put("trace", trace(traceName, trace));
        o.put("chunks", object("chunk_tokens", chunks.chunkTokens(), "bytes_per_token", chunks.bytesPerToken(),
                "chunk_bytes", chunks.chunkBytes(), "save_decode", chunks.saveDecode()));
        Map<String, Object> unlimited = object("hit_rate", outcome.unlimited().hitRate(), "stored_bytes",
                outcome.unlimited().writtenBytes());
        if (blocks) {
            unlimited.put("block_hit_rate", outcome.unlimited().chunkHitRate());
            unlimited.put("all_block_hit_rate", outcome.unlimited().allChunkHitRate());
        }
        o.put("unlimited", unlimited);
        List<Object> results = new ArrayList<>();
        for (SimulationResult r : outcome.results()) {
            results.add(result(r, blocks));
        }
        o.put("results", results);
        o.put("chart", chart);
        o.put("elapsed_ms", outcome.elapsed().toMillis());
        return Json.write(o);
    }

    private static Map<String, Object> trace(String name, ChunkedTrace trace) {
        return switch (trace) {
            case Trace t -> object("source", name, "sessions", t.sessions(), "requests", t.size(),
                    "prompt_tokens", t.totalPromptTokens());
            case BlockTrace b -> object("source", name, "format", "mooncake", "requests", b.size(),
                    "prompt_tokens", b.totalPromptTokens(), "block_tokens", b.blockTokens(), "blocks",
                    b.totalBlocks(), "looked_up_blocks", b.fullBlocks());
        };
    }

    private static Map<String, Object> result(SimulationResult r, boolean blocks) {
        Map<String, Object> o = object("memory_bytes", r.budget().memoryBytes(), "disk_bytes",
                r.budget().diskBytes(), "total_bytes", r.budget().totalBytes(), "hit_rate", r.hitRate(),
                "memory_hit_rate", r.memoryHitRate(), "disk_hit_rate", r.diskHitRate(), "prompt_tokens",
                r.promptTokens(), "memory_hit_tokens", r.memoryHitTokens(), "disk_hit_tokens", r.diskHitTokens(),
                "memory_read_bytes", r.memoryReadBytes(), "disk_read_bytes", r.diskReadBytes(),
                "written_bytes", r.writtenBytes(), "disk_written_bytes", r.diskWrittenBytes(),
                "evicted_bytes", r.evictedBytes(), "promotions", r.promotions(),
                "evicted_regions", r.evictedRegions(), "policy", r.policy().label(),
                "disk_write_limit", r.budget().diskWriteLimit(), "admission_dropped_bytes",
                r.admissionDroppedBytes());
        if (blocks) {
            o.put("hit_blocks", r.hitChunks());
            o.put("looked_up_blocks", r.lookedUpChunks());
            o.put("block_hit_rate", r.chunkHitRate());
            o.put("blocks", r.allChunks());
            o.put("all_block_hit_rate", r.allChunkHitRate());
        }
        return o;
    }
}
