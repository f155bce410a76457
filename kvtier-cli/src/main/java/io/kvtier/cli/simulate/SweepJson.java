package io.kvtier.cli.simulate;

import static io.kvtier.common.Json.object;

import io.kvtier.common.Json;
import io.kvtier.kvcache.simulate.ChunkOptions;
import io.kvtier.kvcache.simulate.SimulationResult;
import io.kvtier.kvcache.simulate.Sweep;
import io.kvtier.kvcache.simulate.Trace;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code kvtier simulate --json}: the trace, the chunking, the unlimited ceiling and one object per budget, with
 * the table's figures in exact units (bytes, tokens, rates 0..1). Field names are stable; {@code format} names the
 * version. A pure function of its arguments.
 */
final class SweepJson {
    static final String FORMAT = "kvtier-simulate/1";

    private SweepJson() {
    }

    static String format(String traceName, Trace trace, ChunkOptions chunks, Sweep.Outcome outcome, String chart) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("format", FORMAT);
        o.put("trace", object("source", traceName, "sessions", trace.sessions(), "requests", trace.size(),
                "prompt_tokens", trace.totalPromptTokens()));
        o.put("chunks", object("chunk_tokens", chunks.chunkTokens(), "bytes_per_token", chunks.bytesPerToken(),
                "chunk_bytes", chunks.chunkBytes(), "save_decode", chunks.saveDecode()));
        o.put("unlimited", object("hit_rate", outcome.unlimited().hitRate(), "stored_bytes",
                outcome.unlimited().writtenBytes()));
        List<Object> results = new ArrayList<>();
        for (SimulationResult r : outcome.results()) {
            results.add(result(r));
        }
        o.put("results", results);
        o.put("chart", chart);
        o.put("elapsed_ms", outcome.elapsed().toMillis());
        return Json.write(o);
    }

    private static Map<String, Object> result(SimulationResult r) {
        return object("memory_bytes", r.budget().memoryBytes(), "disk_bytes", r.budget().diskBytes(),
                "total_bytes", r.budget().totalBytes(), "hit_rate", r.hitRate(), "memory_hit_rate",
                r.memoryHitRate(), "disk_hit_rate", r.diskHitRate(), "prompt_tokens", r.promptTokens(),
                "memory_hit_tokens", r.memoryHitTokens(), "disk_hit_tokens", r.diskHitTokens(),
                "memory_read_bytes", r.memoryReadBytes(), "disk_read_bytes", r.diskReadBytes(),
                "written_bytes", r.writtenBytes(), "disk_written_bytes", r.diskWrittenBytes(),
                "evicted_bytes", r.evictedBytes(), "promotions", r.promotions(),
                "evicted_regions", r.evictedRegions());
    }
}
