package io.kvtier.cli.sizing;

import static io.kvtier.common.Json.object;

import io.kvtier.common.Json;
import io.kvtier.kvcache.sizing.Attention;
import io.kvtier.kvcache.sizing.KvFootprint;
import io.kvtier.kvcache.sizing.ModelSpec;
import io.kvtier.kvcache.sizing.ModelTable;
import io.kvtier.kvcache.sizing.SizingOptions;
import io.kvtier.kvcache.sizing.SizingReport;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code kvtier size --json} for machines: one JSON object with the figures of {@link SizeTable} in named fields, all
 * byte counts as integers. {@code bytes_per_token} is the whole model's KV per token over every layer (what LMCache
 * stores, and what GPU memory holds per token when sliding windows are not freed); per-GPU and per-chunk figures are
 * per worker. A pure function of the report; field names are stable. Written by {@link Json}.
 */
final class SizeJson {
    private SizeJson() {
    }

    static String format(SizingReport r) {
        ModelSpec m = r.model();
        SizingOptions o = r.options();
        KvFootprint kv = r.kv();
        Map<String, Object> out = object("model", m.name(), "source", m.source());
        out.put("attention", attention(m.attention()));
        out.put("parameters", m.parameters());
        out.put("weights_dtype", o.weightsDtype() != null ? o.weightsDtype().label() : m.weightsLabel());
        out.put("kv_dtype", r.kvDtype().label());
        out.put("tp", o.tp());
        out.put("chunk_tokens", o.chunkTokens());
        out.put("context_tokens", o.context());
        out.put("bytes_per_token", kv.bytesPerToken());
        out.put("bytes_per_token_per_gpu", kv.workerBytesPerToken());
        out.put("average_bytes_per_token_windowed", Math.round(kv.averageBytesPerToken(o.context())));
        out.put("chunk_bytes", kv.chunkBytes(o.chunkTokens()));
        out.put("chunk_storing_workers", kv.storingWorkers());
        out.put("sequence_bytes_per_gpu", kv.workerSequenceBytes(o.context(), false));
        out.put("sequence_bytes_per_gpu_windowed", kv.workerSequenceBytes(o.context(), true));
        SizingReport.Gpu g = r.gpu();
        out.put("gpu", object("hbm_bytes", o.gpuHbm(), "gpus", o.gpus(), "instances", o.instances(),
                "memory_utilization", o.gpuMemoryUtilization(), "usable_bytes", g.usable(), "weights_bytes",
                g.weights(), "activation_reserve_bytes", g.reserve(), "kv_bytes", g.kv(), "weights_fit",
                g.weightsFit()));
        out.put("max_sequences", r.maxSequences());
        out.put("max_sequences_windowed", r.maxSequencesWindowed());
        Map<String, Object> tiers = new LinkedHashMap<>();
        for (SizingReport.Tier t : List.of(r.hbm(), r.dram(), r.ssd())) {
            tiers.put(t.name().toLowerCase(Locale.ROOT), object("bytes", t.bytes(), "tokens", t.tokens(),
                    "chunks", t.chunks(), "sequences", t.sequences()));
        }
        out.put("tiers", tiers);
        SizingReport.Suggestion s = r.suggestion();
        out.put("suggested", object("target_sequences", s.targeted() ? s.sequences() : null, "sequences",
                s.sequences(), "bytes", s.bytes(), "memory_bytes", s.memory(), "disk_bytes", s.disk(),
                "shortfall_bytes", s.shortfall(), "flags", s.flags()));
        return Json.write(out);
    }

    static String list() {
        List<Object> models = new ArrayList<>();
        for (ModelTable.Entry e : ModelTable.entries()) {
            ModelSpec m = e.spec();
            Map<String, Object> o = object("name", m.name(), "hf_id", e.hfId(), "source", m.source(),
                    "published_parameters", e.publishedParameters(), "parameters", m.parameters(), "dtype",
                    m.dtype().label(), "weights_dtype", m.weightsLabel(), "bytes_per_token",
                    KvFootprint.of(m, m.dtype(), 1).bytesPerToken());
            o.put("attention", attention(m.attention()));
            models.add(o);
        }
        return Json.write(object("models", models));
    }

    private static Map<String, Object> attention(Attention a) {
        return object("layers", a.layers(), "attention_heads", a.attentionHeads(), "kv_heads", a.kvHeads(),
                "head_dim", a.headDim(), "mla_latent_dim", a.mlaLatentDim(), "sliding_window", a.slidingWindow(),
                "sliding_layers", a.slidingLayers());
    }
}
